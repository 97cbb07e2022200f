/*
 * A minimal JSON writer for the driver's results: values go into a growing
 * buffer with commas and nesting tracked, so the driver writes the whole
 * document and only then puts it in place (temp file + rename).
 */
#ifndef NESTCL_CLI_JSON_H
#define NESTCL_CLI_JSON_H
#include <stddef.h>

typedef struct json {
  char *buf;
  size_t len, cap;
  int depth;
  int first[32]; /* no value yet at this depth */
  int failed;
  int pending_key; /* a key was written; the next value follows it */
  int compact; /* one line, no indentation (JSON lines) */
} json;

void json_init(json *j);
void json_free(json *j);
void json_key(json *j, const char *key);
void json_begin_object(json *j);
void json_end_object(json *j);
void json_begin_array(json *j);
void json_end_array(json *j);
void json_string(json *j, const char *s);
void json_number(json *j, double v);
void json_integer(json *j, long long v);
void json_bool(json *j, int v);
void json_null(json *j);
/* A value that is already JSON text (another writer's whole document). */
void json_raw(json *j, const char *text, size_t len);
#endif
