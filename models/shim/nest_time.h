/*
 * nestcl's NEST-API shim: nest::Time. Time is kept in integer tics; a step is
 * TICS_PER_STEP tics (default 1000 tics per ms, 100 tics per step = 0.1 ms).
 * The conversions follow NEST exactly because refractory counts and spike
 * times depend on them: ms -> tics rounds to the nearest tic
 * (tic_t(ms * TICS_PER_MS + 0.5)), tics -> steps rounds up
 * ((tics + TICS_PER_STEP - 1) * (1.0 / TICS_PER_STEP), truncated), and
 * set_resolution(ms) rounds TICS_PER_MS * ms to whole tics. The infinity
 * limits of NEST's Time are reduced to pos_inf()/neg_inf(), far-away times
 * that devices use as "never"; arithmetic does not saturate at them.
 */
#ifndef NEST_TIME_H
#define NEST_TIME_H

#include <cmath>
#include <limits>

#include "nest_types.h"

namespace nest
{
class Time
{
public:
  struct Range
  {
    static inline tic_t TICS_PER_STEP = 100;
    static inline double TICS_PER_STEP_INV = 1.0 / 100.0;
    static inline tic_t TICS_PER_STEP_RND = 99;
    static inline double TICS_PER_MS = 1000.0;
    static inline double MS_PER_TIC = 1.0 / 1000.0;
    static inline double MS_PER_STEP = 100.0 / 1000.0;
    static inline double STEPS_PER_MS = 1000.0 / 100.0;
  };

  struct tic
  {
    tic_t t;
    explicit tic( tic_t t )
      : t( t )
    {
    }
  };

  struct step
  {
    long t;
    explicit step( long t )
      : t( t )
    {
    }
  };

  struct ms
  {
    double t;
    explicit ms( double t )
      : t( t )
    {
    }
  };

  Time()
    : tics( 0 )
  {
  }
  Time( tic t )
    : tics( t.t )
  {
  }
  Time( step t )
    : tics( t.t * Range::TICS_PER_STEP )
  {
  }
  /* As NEST's: beyond the representable range (infinity included) it is +-infinity. */
  Time( ms t )
    : tics( std::fabs( t.t ) < static_cast< double >( INF_TICS_ ) * Range::MS_PER_TIC
              ? static_cast< tic_t >( t.t * Range::TICS_PER_MS + 0.5 )
            : t.t < 0                                         ? -INF_TICS_
                                                              : INF_TICS_ )
  {
  }

  /* Resolution in ms per step; recomputes the derived constants as NEST does. */
  static void
  set_resolution( double ms_per_step )
  {
    Range::TICS_PER_STEP = static_cast< tic_t >( std::floor( Range::TICS_PER_MS * ms_per_step + 0.5 ) );
    Range::TICS_PER_STEP_INV = 1.0 / static_cast< double >( Range::TICS_PER_STEP );
    Range::TICS_PER_STEP_RND = Range::TICS_PER_STEP - 1;
    Range::MS_PER_STEP = Range::TICS_PER_STEP / Range::TICS_PER_MS;
    Range::STEPS_PER_MS = 1 / Range::MS_PER_STEP;
  }

  static void
  set_resolution( double tics_per_ms, double ms_per_step )
  {
    Range::TICS_PER_MS = tics_per_ms;
    Range::MS_PER_TIC = 1 / tics_per_ms;
    set_resolution( ms_per_step );
  }

  static Time
  get_resolution()
  {
    return Time( tic( Range::TICS_PER_STEP ) );
  }

  static Time
  pos_inf()
  {
    return Time( tic( INF_TICS_ ) );
  }

  static Time
  neg_inf()
  {
    return Time( tic( -INF_TICS_ ) );
  }

  bool
  is_finite() const
  {
    return tics > -INF_TICS_ and tics < INF_TICS_;
  }

  static tic_t
  get_tics_per_step()
  {
    return Range::TICS_PER_STEP;
  }

  static double
  get_tics_per_ms()
  {
    return Range::TICS_PER_MS;
  }

  tic_t
  get_tics() const
  {
    return tics;
  }

  double
  get_ms() const
  {
    return Range::MS_PER_TIC * tics;
  }

  /* As NEST's: the infinities are +-LONG_MAX steps (its delay_max). */
  long
  get_steps() const
  {
    if ( tics >= INF_TICS_ )
    {
      return std::numeric_limits< long >::max();
    }
    if ( tics <= -INF_TICS_ )
    {
      return -std::numeric_limits< long >::max();
    }
    return ( tics + Range::TICS_PER_STEP_RND ) * Range::TICS_PER_STEP_INV;
  }

  bool
  is_grid_time() const
  {
    return ( tics % Range::TICS_PER_STEP ) == 0;
  }

  bool
  is_step() const
  {
    return tics > 0 and is_grid_time();
  }

  static double
  delay_steps_to_ms( long steps )
  {
    return steps * Range::MS_PER_STEP;
  }

  static long
  delay_ms_to_steps( double ms )
  {
    return static_cast< long >( std::floor( ms * Range::STEPS_PER_MS + 0.5 ) );
  }

  Time&
  operator+=( const Time& t )
  {
    tics += t.tics;
    return *this;
  }

  Time&
  advance()
  {
    tics += Range::TICS_PER_STEP;
    return *this;
  }

  friend bool
  operator==( const Time& a, const Time& b )
  {
    return a.tics == b.tics;
  }
  friend bool
  operator!=( const Time& a, const Time& b )
  {
    return a.tics != b.tics;
  }
  friend bool
  operator<( const Time& a, const Time& b )
  {
    return a.tics < b.tics;
  }
  friend bool
  operator<=( const Time& a, const Time& b )
  {
    return a.tics <= b.tics;
  }
  friend bool
  operator>( const Time& a, const Time& b )
  {
    return a.tics > b.tics;
  }
  friend bool
  operator>=( const Time& a, const Time& b )
  {
    return a.tics >= b.tics;
  }
  friend Time
  operator+( const Time& a, const Time& b )
  {
    return Time( tic( a.tics + b.tics ) );
  }
  friend Time
  operator-( const Time& a, const Time& b )
  {
    return Time( tic( a.tics - b.tics ) );
  }

private:
  /* Far enough to be "never", near enough that get_steps() stays exact in a long. */
  static constexpr tic_t INF_TICS_ = std::numeric_limits< tic_t >::max() / 8;

  tic_t tics;
};

const Time TimeZero;
}  // namespace nest

#endif
