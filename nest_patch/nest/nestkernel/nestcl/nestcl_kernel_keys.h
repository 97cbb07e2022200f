/*
 * The kernel keys' settings (nestcl_keys.def names each key, its default and
 * its check; nestcl_kernel_keys.cpp reads and writes them): what the user
 * chose, back to these defaults at ResetKernel.
 */
#ifndef NESTCL_KERNEL_KEYS_H
#define NESTCL_KERNEL_KEYS_H

#include "nestcl/nestcl_manager_types.h"

namespace nest
{
struct KeySettings
{
  long streams = 0;  // nestcl_streams
  std::string device_spec;
  std::string device_name;
  bool probed = false;
  std::string probed_spec, probed_name;  // the device that device_spec selects, before any is opened
  bool device_poisson = false;
  long min_work = DEFAULT_MIN_WORK;            // nestcl_device_min_work
  bool device_loop = true;                     // nestcl_device_loop
  long sync_interval = DEFAULT_SYNC_INTERVAL;  // nestcl_sync_interval
};
}

#endif
