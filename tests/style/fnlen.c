/*
 * nestcl_fnlen: lists the functions of C and C++ sources that are longer than
 * a limit, and checks them against a list of named exceptions.
 *
 *   nestcl_fnlen --max N [--exceptions FILE] [--root DIR] PATH...
 *
 * Each PATH (relative to --root) is a file or a folder searched for .c, .h,
 * .cpp and .hpp files. A function's length runs from the line of its name to
 * the line of its closing brace. Exit status 0 when every function over N
 * lines is in the exceptions file (lines "path function", # comments) and
 * every exception is still over N lines (so the list can only shrink); 1
 * otherwise, listing each offender; 2 on a usage or I/O error.
 *
 * The scan is lexical, not a parse: comments, string and character literals
 * and preprocessor lines are blanked first; a '{' opens a function body when
 * the text before it (since the last ';', '{' or '}') holds a parameter list
 * at its end, or a C++ constructor's initialiser list, and no '='. That is
 * what this project's code looks like; it needs no compiler flags or headers.
 */
#define _DEFAULT_SOURCE
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

typedef struct {
  char path[1024];
  char name[256];
  int found;
} exception;

static exception *g_exc;
static int g_n_exc;
static int g_max = 150;
static int g_failures;

/* Blanks comments, literals and preprocessor lines, keeping every newline. */
static void blank_noncode(char *s, size_t n)
{
  size_t i = 0;
  int line_start = 1;
  while (i < n) {
    char c = s[i];
    if (c == '/' && i + 1 < n && s[i + 1] == '/') {
      while (i < n && s[i] != '\n')
        s[i++] = ' ';
    } else if (c == '/' && i + 1 < n && s[i + 1] == '*') {
      s[i++] = ' ';
      s[i++] = ' ';
      while (i < n && !(s[i] == '*' && i + 1 < n && s[i + 1] == '/')) {
        if (s[i] != '\n')
          s[i] = ' ';
        i++;
      }
      if (i < n) {
        s[i++] = ' ';
        s[i++] = ' ';
      }
    } else if (c == '"' || c == '\'') {
      i++;
      while (i < n && s[i] != c && s[i] != '\n') {
        if (s[i] == '\\' && i + 1 < n && s[i + 1] != '\n')
          s[i++] = ' ';
        s[i++] = ' ';
      }
      i++;
    } else if (c == '#' && line_start) {
      while (i < n && s[i] != '\n') {
        if (s[i] == '\\' && i + 1 < n && s[i + 1] == '\n')
          i++; /* a continued directive: keep the newline, go on blanking */
        else
          s[i] = ' ';
        i++;
      }
    } else {
      i++;
    }
    if (i > 0 && i <= n) {
      char p = s[i - 1];
      if (p == '\n')
        line_start = 1;
      else if (p != ' ' && p != '\t')
        line_start = 0;
    }
  }
}

static int is_ident(char c)
{
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == ':' || c == '~';
}

/* The word ending just before position end (skipping blanks), as [*b, end). */
static size_t word_before(const char *s, size_t head, size_t end, size_t *b)
{
  while (end > head && (s[end - 1] == ' ' || s[end - 1] == '\t' || s[end - 1] == '\n'))
    end--;
  *b = end;
  while (*b > head && is_ident(s[*b - 1]))
    (*b)--;
  return end;
}

/* Whether the head [head, brace) ends with a parameter list, possibly followed
   by qualifiers, or by a constructor's initialiser list; if so, sets the
   position of the function's name. */
static int function_head(const char *s, size_t head, size_t brace, size_t *name_at)
{
  size_t k, depth = 0, first_paren = (size_t)-1;
  for (k = head; k < brace; k++) {
    if (s[k] == '=' && depth == 0 && first_paren == (size_t)-1)
      return 0; /* an initialiser: data, or a lambda assigned to a name */
    if (s[k] == '(') {
      if (depth == 0 && first_paren == (size_t)-1)
        first_paren = k;
      depth++;
    } else if (s[k] == ')' && depth > 0) {
      depth--;
    }
  }
  if (first_paren == (size_t)-1 || depth != 0)
    return 0;
  /* after the last ')': only qualifiers (const, override, noexcept, ...) */
  k = brace;
  while (k > head && s[k - 1] != ')')
    k--;
  for (size_t j = k; j < brace; j++)
    if (s[j] == ':' || s[j] == ',' || s[j] == '(')
      return 0;
  size_t b, e = word_before(s, head, first_paren, &b);
  if (b == e)
    return 0;
  static const char *const keywords[] = {"if", "for", "while", "switch", "catch", "return", "sizeof", "do"};
  for (size_t w = 0; w < sizeof keywords / sizeof keywords[0]; w++)
    if (e - b == strlen(keywords[w]) && !strncmp(s + b, keywords[w], e - b))
      return 0;
  *name_at = b;
  return 1;
}

static int line_of(const char *s, size_t at)
{
  int line = 1;
  for (size_t k = 0; k < at; k++)
    line += s[k] == '\n';
  return line;
}

static void report(const char *path, const char *name, int len, int line)
{
  for (int k = 0; k < g_n_exc; k++)
    if (!strcmp(g_exc[k].path, path) && !strcmp(g_exc[k].name, name)) {
      g_exc[k].found = 1;
      return;
    }
  printf("%s:%d: %s is %d lines (more than %d)\n", path, line, name, len, g_max);
  g_failures++;
}

/* Scans one blanked file: functions are the bodies opened at a scope that is
   not itself a function (file, namespace, extern "C", class). */
static void scan(const char *path, const char *s, size_t n)
{
  enum { MAXD = 512 };
  int in_func[MAXD];
  size_t start[MAXD];
  int depth = 0;
  size_t head = 0;
  for (size_t i = 0; i < n; i++) {
    if (s[i] == ';') {
      head = i + 1;
    } else if (s[i] == '{') {
      size_t name_at = 0;
      int outer_func = depth > 0 && in_func[depth - 1];
      int f = !outer_func && function_head(s, head, i, &name_at);
      if (depth < MAXD) {
        in_func[depth] = f || outer_func;
        start[depth] = f ? name_at : (size_t)-1;
      }
      depth++;
      head = i + 1;
    } else if (s[i] == '}') {
      if (depth > 0)
        depth--;
      if (depth < MAXD && start[depth] != (size_t)-1 && !(depth > 0 && in_func[depth - 1])) {
        int l0 = line_of(s, start[depth]), len = line_of(s, i) - l0 + 1;
        if (len > g_max) {
          char name[256];
          size_t e = start[depth];
          while (e < n && is_ident(s[e]) && e - start[depth] < sizeof name - 1)
            e++;
          memcpy(name, s + start[depth], e - start[depth]);
          name[e - start[depth]] = 0;
          report(path, name, len, l0);
        }
      }
      head = i + 1;
    }
  }
}

static int has_suffix(const char *p, const char *suf)
{
  size_t a = strlen(p), b = strlen(suf);
  return a >= b && !strcmp(p + a - b, suf);
}

static int scan_file(const char *root, const char *rel)
{
  char full[2048];
  snprintf(full, sizeof full, "%s/%s", root, rel);
  FILE *f = fopen(full, "rb");
  if (!f) {
    fprintf(stderr, "error: cannot read %s\n", full);
    return -1;
  }
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *s = malloc((size_t)n + 1);
  size_t got = s ? fread(s, 1, (size_t)n, f) : 0;
  fclose(f);
  if (!s || got != (size_t)n) {
    free(s);
    fprintf(stderr, "error: cannot read %s\n", full);
    return -1;
  }
  s[n] = 0;
  blank_noncode(s, (size_t)n);
  scan(rel, s, (size_t)n);
  free(s);
  return 0;
}

static int walk(const char *root, const char *rel)
{
  char full[2048];
  struct stat st;
  snprintf(full, sizeof full, "%s/%s", root, rel);
  if (stat(full, &st) != 0) {
    fprintf(stderr, "error: no such file or folder: %s\n", full);
    return -1;
  }
  if (!S_ISDIR(st.st_mode)) {
    if (has_suffix(rel, ".c") || has_suffix(rel, ".h") || has_suffix(rel, ".cpp") || has_suffix(rel, ".hpp"))
      return scan_file(root, rel);
    return 0;
  }
  struct dirent **ents;
  int m = scandir(full, &ents, NULL, alphasort), rc = 0;
  if (m < 0) {
    fprintf(stderr, "error: cannot list %s\n", full);
    return -1;
  }
  for (int k = 0; k < m; k++) {
    if (ents[k]->d_name[0] != '.' && rc == 0) {
      char sub[2048];
      snprintf(sub, sizeof sub, "%s/%s", rel, ents[k]->d_name);
      rc = walk(root, sub);
    }
    free(ents[k]);
  }
  free(ents);
  return rc;
}

static int read_exceptions(const char *file)
{
  FILE *f = fopen(file, "r");
  char line[2048];
  if (!f) {
    fprintf(stderr, "error: cannot read the exceptions file %s\n", file);
    return -1;
  }
  while (fgets(line, sizeof line, f)) {
    char p[1024], nm[256];
    if (line[0] == '#' || sscanf(line, "%1023s %255s", p, nm) != 2)
      continue;
    exception *x = realloc(g_exc, (size_t)(g_n_exc + 1) * sizeof *x);
    if (!x) {
      fclose(f);
      return -1;
    }
    g_exc = x;
    snprintf(g_exc[g_n_exc].path, sizeof g_exc[g_n_exc].path, "%s", p);
    snprintf(g_exc[g_n_exc].name, sizeof g_exc[g_n_exc].name, "%s", nm);
    g_exc[g_n_exc++].found = 0;
  }
  fclose(f);
  return 0;
}

int main(int argc, char **argv)
{
  const char *root = ".", *exc = NULL;
  int k, n_paths = 0;
  for (k = 1; k < argc; k++) {
    if (!strcmp(argv[k], "--max") && k + 1 < argc) {
      char *end;
      long v = strtol(argv[++k], &end, 10);
      if (*end || v < 1 || v > 100000) {
        fprintf(stderr, "error: --max takes a positive line count, not '%s'\n", argv[k]);
        return 2;
      }
      g_max = (int)v;
    } else if (!strcmp(argv[k], "--exceptions") && k + 1 < argc) {
      exc = argv[++k];
    } else if (!strcmp(argv[k], "--root") && k + 1 < argc) {
      root = argv[++k];
    } else if (argv[k][0] == '-') {
      fprintf(stderr, "usage: nestcl_fnlen --max N [--exceptions FILE] [--root DIR] PATH...\n");
      return 2;
    } else {
      argv[n_paths++] = argv[k];
    }
  }
  if (!n_paths || (exc && read_exceptions(exc) != 0)) {
    fprintf(stderr, "usage: nestcl_fnlen --max N [--exceptions FILE] [--root DIR] PATH...\n");
    return 2;
  }
  for (k = 0; k < n_paths; k++)
    if (walk(root, argv[k]) != 0)
      return 2;
  for (k = 0; k < g_n_exc; k++)
    if (!g_exc[k].found) {
      printf("%s: %s is no longer over %d lines (or gone): remove it from the exceptions\n", g_exc[k].path,
             g_exc[k].name, g_max);
      g_failures++;
    }
  free(g_exc);
  if (g_failures)
    printf("%d problem(s): functions over %d lines must be split by naming their steps\n", g_failures, g_max);
  return g_failures ? 1 : 0;
}
