/*
 * The stream VPs' share of the neurons (nestcl_gpu_fraction.cpp): as set, or
 * "auto" from the device's performance profile, and what each Simulate
 * measured for it.
 */
#ifndef NESTCL_GPU_FRACTION_H
#define NESTCL_GPU_FRACTION_H

#include "nestcl/nestcl_manager_types.h"

namespace nest
{
struct FractionState
{
  bool fraction_auto = true;
  double fraction = 0.0;  // as set, when not auto
  // nestcl_gpu_fraction "auto": how the share in force was chosen (choose_split),
  // and after each Simulate what it measured and the share the model recommends.
  bool split_decided = false;
  std::string split_source = "even split";
  double split_alpha = -1.0;    // the share auto placed (< 0: round robin)
  double predicted_wall = NAN;  // s per simulated s, the profile's, at that share
  double measured_wall = NAN;   // s per simulated s, the last Simulate's run
  double recommended = NAN, recommended_wall = NAN;
  double run_wall0 = 0.0, run_t0_ms = 0.0;  // when the last Simulate's run began
  double busy0 = 0.0;                       // the streams' busy seconds then
  long neurons = 0;                         // neurons of the network (counted by prepare)
#ifdef HAVE_NESTCL_PERFMODEL
  // The device's profile, looked up once per ResetKernel or device change (-1: not yet; else NESTCL_PM_*).
  int profile_state = -1;
  nestcl_pm_profile profile;
  std::string profile_path, profile_why;
#endif
};
}

#endif
