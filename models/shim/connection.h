/*
 * nestcl's NEST-API shim: NEST's connection.h declares the synapse base class
 * template; neuron models include it only for the types it pulls in. Synapse
 * models come with the synapse work, so this header carries just those types.
 */
#ifndef CONNECTION_H
#define CONNECTION_H

#include "event.h"
#include "nest_time.h"
#include "nest_types.h"
#include "node.h"

#endif
