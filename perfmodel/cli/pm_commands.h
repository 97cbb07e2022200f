/* `nestcl perfmodel fit|predict|tune|plot` (pm_commands.c) and `floor` (pm_floor.c). */
#ifndef NESTCL_PM_COMMANDS_H
#define NESTCL_PM_COMMANDS_H
/* fit, predict, tune, plot; -1 for another name. */
int pm_command(const char *name, int argc, char **argv);
/* floor: the real-time factor a run's launches and waits impose. */
int pm_floor(int argc, char **argv);
#endif
