/*
 * NEST's nestkernel/target_identifier.h declares TargetIdentifierPtrRport and
 * TargetIdentifierIndex; the shim defines them with Connection in
 * connection.h. This header lets code written against NEST (the translator's
 * synapse glue) include the name it includes there.
 */
#ifndef NESTCL_SHIM_TARGET_IDENTIFIER_H
#define NESTCL_SHIM_TARGET_IDENTIFIER_H

#include "connection.h"

#endif
