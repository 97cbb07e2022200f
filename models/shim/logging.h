/*
 * nestcl's NEST-API shim: NEST's LOG() macro; the shim drops log messages
 * (models only log warnings from set_status).
 */
#ifndef LOGGING_H
#define LOGGING_H

#define LOG( severity, fctn, msg ) ( (void) 0 )

#endif
