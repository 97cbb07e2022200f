/*
 * NEST's regula_falsi( node, dt ) for the shim: the time in [0, dt] at which
 * node.threshold_distance( t ) crosses zero, by the Illinois variant of the
 * false-position method (the end whose sign repeats has its value halved), to
 * |distance| < 1e-14 within 500 iterations; NumericalInstability when there
 * is no sign change or no convergence. Written for nestcl from the method's
 * definition and NEST's documented interface.
 */
#ifndef REGULA_FALSI_H
#define REGULA_FALSI_H

#include <cmath>

#include "exceptions.h"

namespace nest
{
template < typename CN >
double
regula_falsi( const CN& node, const double dt )
{
  double lo = 0.0, hi = dt;
  double f_lo = node.threshold_distance( lo );
  double f_hi = node.threshold_distance( hi );
  if ( f_lo * f_hi > 0 )
  {
    throw NumericalInstability( "regula_falsi: no threshold crossing in the interval" );
  }
  int side = 0;
  for ( int iter = 0; iter < 500; ++iter )
  {
    const double t = ( lo * f_hi - hi * f_lo ) / ( f_hi - f_lo );
    const double f_t = node.threshold_distance( t );
    if ( std::abs( f_t ) < 1e-14 )
    {
      return t;
    }
    if ( f_lo * f_t > 0.0 )
    {
      lo = t;
      f_lo = f_t;
      if ( side == 1 )
      {
        f_hi /= 2;
      }
      side = 1;
    }
    else if ( f_hi * f_t > 0.0 )
    {
      hi = t;
      f_hi = f_t;
      if ( side == -1 )
      {
        f_lo /= 2;
      }
      side = -1;
    }
    else
    {
      throw NumericalInstability( "regula_falsi: no convergence" );
    }
  }
  throw NumericalInstability( "regula_falsi: no convergence within 500 iterations" );
}
}

#endif
