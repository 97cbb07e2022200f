/*
 * nestcl's NEST-API shim: basic NEST types. The shim lets this project's model
 * sources (the .cpp files in models/) compile natively with the same #include lines and the
 * same names NEST 3.10 gives them, so that (a) the natively built models are
 * the bit-exact reference for the translated kernels and (b) nestcl-translate
 * parses them exactly as it parses NEST's own models. Written for nestcl; it
 * mirrors NEST's interface and semantics, not its code.
 */
#ifndef NEST_TYPES_H
#define NEST_TYPES_H

#include <cstddef>
#include <cstdint>
#include <limits>

namespace nest
{
/* Time in tics; NEST uses a signed 64-bit integer. */
typedef long tic_t;
/* Index of a synapse type. */
typedef unsigned int synindex;
/* Receptor port and related indices. */
typedef long port;
typedef long rport;

const size_t invalid_index = std::numeric_limits< size_t >::max();
const synindex invalid_synindex = std::numeric_limits< synindex >::max();
const long invalid_port = -1;
}  // namespace nest

#endif
