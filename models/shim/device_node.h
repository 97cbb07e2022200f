/*
 * nestcl's NEST-API shim: NEST's DeviceNode base; the shim folds it into
 * StimulationDevice.
 */
#ifndef DEVICE_NODE_H
#define DEVICE_NODE_H

#include "stimulation_device.h"

#endif
