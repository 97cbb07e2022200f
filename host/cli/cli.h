/* The exit codes every `nestcl` command shares (nestcl_main.c dispatches, each command's file implements it). */
#ifndef NESTCL_CLI_H
#define NESTCL_CLI_H
/* Exit codes of docs/architecture.md, "Conventions". */
#define CLI_OK 0
#define CLI_RUNTIME 1
#define CLI_USAGE 2
#endif
