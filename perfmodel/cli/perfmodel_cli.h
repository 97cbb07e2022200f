/* `nestcl perfmodel ...`: the dispatcher of its commands (perfmodel_cli.c), called by nestcl_main.c. */
#ifndef NESTCL_PERFMODEL_CLI_H
#define NESTCL_PERFMODEL_CLI_H
int cli_perfmodel(int argc, char **argv);
#endif
