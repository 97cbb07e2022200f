/*
 * nestcl's NEST-API shim: the random-number interface devices use in NEST
 * 3.10: get_vp_specific_rng(thread) returns a generator (RngPtr), and
 * distributions such as poisson_distribution draw from it. The shim keeps one
 * seeded std::mt19937_64 per process; reseed_vp_specific_rng_() restarts it so
 * a test can repeat a draw sequence. (The device path draws from the project's
 * Philox streams instead, docs/architecture.md, "Determinism and random numbers"; native draws are
 * not meant to match.)
 */
#ifndef RANDOM_GENERATORS_H
#define RANDOM_GENERATORS_H

#include <cstddef>
#include <cstdint>
#include <random>

namespace nest
{
class BaseRandomGenerator
{
public:
  explicit BaseRandomGenerator( std::uint64_t seed )
    : engine_( seed )
  {
  }
  double
  drand()
  {
    return std::uniform_real_distribution< double >( 0.0, 1.0 )( engine_ );
  }
  std::mt19937_64&
  engine()
  {
    return engine_;
  }
  void
  seed( std::uint64_t s )
  {
    engine_.seed( s );
  }

private:
  std::mt19937_64 engine_;
};

typedef BaseRandomGenerator* RngPtr;

inline RngPtr
get_vp_specific_rng( size_t )
{
  static BaseRandomGenerator rng( 12345 );
  return &rng;
}

inline void
reseed_vp_specific_rng_( std::uint64_t seed )
{
  get_vp_specific_rng( 0 )->seed( seed );
}

template < typename DistributionT >
class RandomDistribution
{
public:
  typedef typename DistributionT::param_type param_type;
  typedef typename DistributionT::result_type result_type;

  void
  param( const param_type& p )
  {
    dist_.param( p );
  }
  param_type
  param() const
  {
    return dist_.param();
  }
  result_type
  operator()( RngPtr rng )
  {
    return dist_( rng->engine() );
  }
  result_type
  operator()( RngPtr rng, param_type& p )
  {
    return dist_( rng->engine(), p );
  }

private:
  DistributionT dist_;
};

using uniform_real_distribution = RandomDistribution< std::uniform_real_distribution<> >;
using normal_distribution = RandomDistribution< std::normal_distribution<> >;
using lognormal_distribution = RandomDistribution< std::lognormal_distribution<> >;
using binomial_distribution = RandomDistribution< std::binomial_distribution< unsigned long > >;
using gamma_distribution = RandomDistribution< std::gamma_distribution<> >;
using exponential_distribution = RandomDistribution< std::exponential_distribution<> >;
using poisson_distribution = RandomDistribution< std::poisson_distribution< unsigned long > >;
}  // namespace nest

#endif
