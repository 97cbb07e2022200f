/* `nestcl perfmodel plot` (pm_plot.c): gnuplot PNGs of a fitted sweep. */
#ifndef NESTCL_PM_PLOT_H
#define NESTCL_PM_PLOT_H
int pm_plot(int argc, char **argv);
#endif
