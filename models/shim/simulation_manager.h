/*
 * nestcl's NEST-API shim: NEST keeps this manager in its own header; the shim
 * defines all managers in kernel_manager.h, which this includes.
 */
#ifndef SIMULATION_MANAGER_H
#define SIMULATION_MANAGER_H

#include "kernel_manager.h"

#endif
