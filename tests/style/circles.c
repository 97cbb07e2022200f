/*
 * nestcl_circles: finds source files that depend on each other in a circle.
 *
 *   nestcl_circles [--exceptions FILE] OBJECT.o...
 *
 * Reads each object's symbols with nm (POSIX format): file A depends on file B
 * when A uses a global symbol that B defines. Every strongly connected group
 * of two or more files (A needs B and B, through any chain, needs A) is a
 * circle: it is printed with the symbols that close it, and the exit status
 * is 1, unless the exceptions file names the group (one line per circle: its
 * objects' short names (the path inside CMake's <target>.dir), sorted and
 * separated by spaces; # comments). A listed circle
 * that no longer exists fails too, so the list can only shrink. Exit 2 on a
 * usage or I/O error.
 *
 * Why symbols and not #includes: the engine's files share one internal header,
 * so the include graph cannot show that api.c calls into build.c while build.c
 * calls back into api.c. The linker's view can.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAXF = 512 };

typedef struct {
  char *name;
  int file;
} sym;

static const char *g_files[MAXF];
static int g_n;
static sym *g_def, *g_use;
static size_t g_ndef, g_nuse;
static unsigned char g_edge[MAXF][MAXF];

static int push(sym **v, size_t *n, const char *name, int file)
{
  if ((*n & (*n - 1)) == 0) {
    sym *x = realloc(*v, (*n ? *n * 2 : 64) * sizeof *x);
    if (!x)
      return -1;
    *v = x;
  }
  (*v)[*n].name = strdup(name);
  (*v)[(*n)++].file = file;
  return (*v)[*n - 1].name ? 0 : -1;
}

/* nm -P -g: "name type [value size]"; U is a use, other letters a definition. */
static int read_symbols(int file)
{
  char cmd[4200], line[4096];
  snprintf(cmd, sizeof cmd, "nm -P -g '%s' 2>/dev/null", g_files[file]);
  FILE *p = popen(cmd, "r");
  if (!p)
    return -1;
  while (fgets(line, sizeof line, p)) {
    char name[2048], type[8];
    if (sscanf(line, "%2047s %7s", name, type) != 2)
      continue;
    if (!strcmp(type, "U"))
      push(&g_use, &g_nuse, name, file);
    else if (strchr("TDBRVWCGS", type[0]))
      push(&g_def, &g_ndef, name, file);
  }
  return pclose(p) == 0 ? 0 : -1;
}

static int cmp_sym(const void *a, const void *b)
{
  return strcmp(((const sym *)a)->name, ((const sym *)b)->name);
}

static void build_edges(void)
{
  qsort(g_def, g_ndef, sizeof *g_def, cmp_sym);
  for (size_t k = 0; k < g_nuse; k++) {
    sym *d = bsearch(&g_use[k], g_def, g_ndef, sizeof *g_def, cmp_sym);
    if (d && d->file != g_use[k].file)
      g_edge[g_use[k].file][d->file] = 1;
  }
}

/* Tarjan's strongly connected components. */
static int g_index[MAXF], g_low[MAXF], g_on[MAXF], g_stack[MAXF], g_sp, g_next = 1, g_comp[MAXF], g_ncomp;

static void strong(int v)
{
  g_index[v] = g_low[v] = g_next++;
  g_stack[g_sp++] = v;
  g_on[v] = 1;
  for (int w = 0; w < g_n; w++) {
    if (!g_edge[v][w])
      continue;
    if (!g_index[w]) {
      strong(w);
      if (g_low[w] < g_low[v])
        g_low[v] = g_low[w];
    } else if (g_on[w] && g_index[w] < g_low[v]) {
      g_low[v] = g_index[w];
    }
  }
  if (g_low[v] == g_index[v]) {
    int w;
    do {
      w = g_stack[--g_sp];
      g_on[w] = 0;
      g_comp[w] = g_ncomp;
    } while (w != v);
    g_ncomp++;
  }
}

/* An object's short name: its path inside CMake's <target>.dir folder. */
static const char *base(const char *p)
{
  const char *s = strstr(p, ".dir/");
  if (s)
    return s + 5;
  s = strrchr(p, '/');
  return s ? s + 1 : p;
}

static int cmp_str(const void *a, const void *b)
{
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The circle's key: its members' object names, sorted, separated by spaces. */
static void circle_key(int c, char *key, size_t cap)
{
  const char *names[MAXF];
  int m = 0;
  key[0] = 0;
  for (int v = 0; v < g_n; v++)
    if (g_comp[v] == c)
      names[m++] = base(g_files[v]);
  qsort(names, (size_t)m, sizeof names[0], cmp_str);
  for (int k = 0; k < m; k++) {
    strncat(key, names[k], cap - strlen(key) - 1);
    if (k + 1 < m)
      strncat(key, " ", cap - strlen(key) - 1);
  }
}

/* One symbol for each edge inside the circle: who uses what from whom. */
static void print_circle(int c)
{
  for (size_t k = 0; k < g_nuse; k++) {
    int a = g_use[k].file;
    sym *d = bsearch(&g_use[k], g_def, g_ndef, sizeof *g_def, cmp_sym);
    if (!d || g_comp[a] != c || g_comp[d->file] != c || d->file == a || g_edge[a][d->file] != 1)
      continue;
    g_edge[a][d->file] = 2; /* print each edge once */
    printf("    %s uses %s from %s\n", base(g_files[a]), g_use[k].name, base(g_files[d->file]));
  }
}

int main(int argc, char **argv)
{
  char listed[64][4096];
  int n_listed = 0, found[64] = {0}, failures = 0;
  for (int k = 1; k < argc; k++) {
    if (!strcmp(argv[k], "--exceptions") && k + 1 < argc) {
      FILE *f = fopen(argv[++k], "r");
      char line[4096];
      if (!f) {
        fprintf(stderr, "error: cannot read %s\n", argv[k]);
        return 2;
      }
      while (fgets(line, sizeof line, f) && n_listed < 64) {
        line[strcspn(line, "\r\n")] = 0;
        if (line[0] && line[0] != '#')
          snprintf(listed[n_listed++], sizeof listed[0], "%s", line);
      }
      fclose(f);
    } else if (g_n < MAXF) {
      g_files[g_n++] = argv[k];
    }
  }
  if (!g_n) {
    fprintf(stderr, "usage: nestcl_circles [--exceptions FILE] OBJECT.o...\n");
    return 2;
  }
  for (int k = 0; k < g_n; k++)
    if (read_symbols(k) != 0) {
      fprintf(stderr, "error: nm cannot read %s\n", g_files[k]);
      return 2;
    }
  build_edges();
  for (int v = 0; v < g_n; v++)
    if (!g_index[v])
      strong(v);
  for (int c = 0; c < g_ncomp; c++) {
    char key[4096];
    int size = 0, known = 0;
    for (int v = 0; v < g_n; v++)
      size += g_comp[v] == c;
    if (size < 2)
      continue;
    circle_key(c, key, sizeof key);
    for (int k = 0; k < n_listed; k++)
      if (!strcmp(listed[k], key))
        known = found[k] = 1;
    if (known)
      continue;
    printf("circle of %d files: %s\n", size, key);
    print_circle(c);
    failures++;
  }
  for (int k = 0; k < n_listed; k++)
    if (!found[k]) {
      printf("listed circle no longer exists: %s (remove it from the exceptions)\n", listed[k]);
      failures++;
    }
  printf("%d object files, %d circle(s) not listed or stale\n", g_n, failures);
  return failures ? 1 : 0;
}
