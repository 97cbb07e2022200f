/* `nestcl perfmodel floor` (pm_floor.c): the real-time factor a run's launches and waits impose. */
#ifndef NESTCL_PM_FLOOR_H
#define NESTCL_PM_FLOOR_H
int pm_floor(int argc, char **argv);
#endif
