/*
 * nestcl's NEST-API shim: the exact-integration propagators from synaptic
 * current to membrane potential of NEST's libnestutil (IAFPropagatorExp and
 * IAFPropagatorAlpha), written from the equations of Rotter & Diesmann (1999).
 * For dV/dt = -V/tau_m + I/C with I decaying with tau_syn (and, for alpha
 * currents, dI/dt = dI - I/tau_syn, d(dI)/dt = -dI/tau_syn), one step h gives
 *   P32 (I -> V)  = beta/C * exp(-h/tau_syn) * expm1(h/beta),
 *   P31 (dI -> V) = beta/C * exp(-h/tau_syn) * (beta * expm1(h/beta) - h),
 * with beta = tau_syn tau_m / (tau_m - tau_syn). Near tau_m == tau_syn these
 * lose precision; there the limits P32 = h/C exp(-h/tau_m) and
 * P31 = h^2/(2C) exp(-h/tau_m) are used: P32 when the regular value is not a
 * positive normal number, P31 when h is below the stability bound
 * 1e-7 tau_m^2 / |tau_m - tau_syn| (the criterion NEST documents).
 * This project's models inline the same formulas in pre_run_hook so that the
 * translator needs no class support; this header serves NEST-identical code.
 */
#ifndef IAF_PROPAGATOR_H
#define IAF_PROPAGATOR_H

#include <cmath>
#include <tuple>

#include "numerics.h"

class IAFPropagator
{
public:
  IAFPropagator()
    : IAFPropagator( numerics::nan, numerics::nan, numerics::nan )
  {
  }

  IAFPropagator( double tau_syn, double tau_m, double c_m )
    : tau_syn_( tau_syn )
    , tau_m_( tau_m )
    , c_m_( c_m )
    , h_min_regular_( 1e-7 * tau_m * tau_m / std::abs( tau_m - tau_syn ) )
    , beta_( tau_syn * tau_m / ( tau_m - tau_syn ) )
    , gamma_( beta_ / c_m )
    , inv_tau_syn_( 1 / tau_syn )
    , inv_tau_m_( 1 / tau_m )
    , inv_c_m_( 1 / c_m )
    , inv_beta_( ( tau_m - tau_syn ) / ( tau_syn * tau_m ) )
  {
  }

protected:
  /* P32, exp(-h/tau_syn), expm1(h/beta), and exp(-h/tau_m) (NaN unless needed). */
  std::tuple< double, double, double, double >
  evaluate_P32_( double h ) const
  {
    const double exp_syn = std::exp( -h * inv_tau_syn_ );
    const double expm1_beta = numerics::expm1( h * inv_beta_ );
    const double p32 = gamma_ * exp_syn * expm1_beta;
    if ( std::isnormal( p32 ) and p32 > 0 )
    {
      return std::make_tuple( p32, exp_syn, expm1_beta, numerics::nan );
    }
    const double exp_m = std::exp( -h * inv_tau_m_ );
    return std::make_tuple( h * inv_c_m_ * exp_m, exp_syn, expm1_beta, exp_m );
  }

  double tau_syn_;
  double tau_m_;
  double c_m_;
  double h_min_regular_;
  double beta_;
  double gamma_;
  double inv_tau_syn_;
  double inv_tau_m_;
  double inv_c_m_;
  double inv_beta_;
};

class IAFPropagatorExp : public IAFPropagator
{
public:
  IAFPropagatorExp() = default;
  IAFPropagatorExp( double tau_syn, double tau_m, double c_m )
    : IAFPropagator( tau_syn, tau_m, c_m )
  {
  }

  double
  evaluate( double h ) const
  {
    return std::get< 0 >( evaluate_P32_( h ) );
  }
};

class IAFPropagatorAlpha : public IAFPropagator
{
public:
  IAFPropagatorAlpha() = default;
  IAFPropagatorAlpha( double tau_syn, double tau_m, double c_m )
    : IAFPropagator( tau_syn, tau_m, c_m )
  {
  }

  /* (P31, P32) */
  std::tuple< double, double >
  evaluate( double h ) const
  {
    double p32, exp_syn, expm1_beta, exp_m;
    std::tie( p32, exp_syn, expm1_beta, exp_m ) = evaluate_P32_( h );
    if ( h > h_min_regular_ )
    {
      return std::make_tuple( gamma_ * exp_syn * ( beta_ * expm1_beta - h ), p32 );
    }
    if ( std::isnan( exp_m ) )
    {
      exp_m = std::exp( -h * inv_tau_m_ );
    }
    return std::make_tuple( 0.5 * h * h * inv_c_m_ * exp_m, p32 );
  }
};

#endif
