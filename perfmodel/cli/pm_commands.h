/* `nestcl perfmodel fit|predict|tune|plot` (pm_commands.c dispatches; plot is pm_plot.c's). */
#ifndef NESTCL_PM_COMMANDS_H
#define NESTCL_PM_COMMANDS_H
/* fit, predict, tune, plot; -1 for another name. */
int pm_command(const char *name, int argc, char **argv);
#endif
