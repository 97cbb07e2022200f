/*
 * A small JSON reader for the perfmodel's inputs: the driver's results files,
 * the sweep's JSON lines and the stored profiles. It parses a whole document
 * into a tree, refuses anything that is not strict JSON (RFC 8259) with the
 * line and column, bounds the nesting depth, and never reads past the given
 * length, because profiles come from a cache folder that anything may have
 * written into.
 */
#ifndef NESTCL_PM_JSON_H
#define NESTCL_PM_JSON_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum pmj_type { PMJ_NULL, PMJ_BOOL, PMJ_NUMBER, PMJ_STRING, PMJ_ARRAY, PMJ_OBJECT } pmj_type;

typedef struct pmj {
  pmj_type type;
  double num; /* number, or bool (0/1) */
  char *str; /* string (NUL-terminated; embedded NULs refused) */
  size_t n; /* array items or object members */
  struct pmj *items; /* [n] */
  char **keys; /* [n] for objects */
} pmj;

#define PMJ_MAX_DEPTH 64

/*
 * Parses text[0..len) as one JSON value (surrounding white space allowed).
 * Returns the tree (free with pmj_free) or NULL with a message in err.
 */
pmj *pmj_parse(const char *text, size_t len, char *err, size_t errlen);
/* Reads and parses a whole file; messages name the file. */
pmj *pmj_parse_file(const char *path, char *err, size_t errlen);
void pmj_free(pmj *v);

/* Member of an object (NULL if absent or v is no object). */
const pmj *pmj_get(const pmj *v, const char *key);
/* Dotted path of object members: "simulation.sim_wall_s". */
const pmj *pmj_path(const pmj *v, const char *path);
/* The number at path, or NULL-safe: 0 and *ok = 0 when absent or not a number. */
double pmj_number(const pmj *v, const char *path, int *ok);
/* The string at path, or NULL. */
const char *pmj_string(const pmj *v, const char *path);

#ifdef __cplusplus
}
#endif
#endif
