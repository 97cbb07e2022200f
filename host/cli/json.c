/* The driver's JSON writer (see json.h). Non-finite numbers become null. */
#include "json.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void json_init(json *j)
{
  memset(j, 0, sizeof *j);
  j->first[0] = 1;
}

void json_free(json *j)
{
  free(j->buf);
  memset(j, 0, sizeof *j);
}

static void put(json *j, const char *fmt, ...)
{
  va_list ap;
  for (;;) {
    size_t room = j->cap - j->len;
    va_start(ap, fmt);
    int n = vsnprintf(j->buf ? j->buf + j->len : NULL, room, fmt, ap);
    va_end(ap);
    if (n < 0) {
      j->failed = 1;
      return;
    }
    if ((size_t)n < room) {
      j->len += (size_t)n;
      return;
    }
    size_t cap = j->cap ? j->cap * 2 : 4096;
    while (cap - j->len <= (size_t)n) {
      cap *= 2;
    }
    char *b = realloc(j->buf, cap);
    if (!b) {
      j->failed = 1;
      return;
    }
    j->buf = b;
    j->cap = cap;
  }
}

static void indent(json *j)
{
  if (j->compact) {
    return;
  }
  put(j, "\n%*s", 2 * j->depth, "");
}

/* Before a value inside an array (keys handle their own comma). */
static void before_value(json *j, int is_key_value)
{
  if (is_key_value) {
    return;
  }
  if (j->depth > 0) {
    if (!j->first[j->depth]) {
      put(j, ",");
    }
    j->first[j->depth] = 0;
    indent(j);
  }
}


void json_key(json *j, const char *key)
{
  if (!j->first[j->depth]) {
    put(j, ",");
  }
  j->first[j->depth] = 0;
  indent(j);
  j->pending_key = 1; /* the key itself takes no comma */
  json_string(j, key);
  put(j, ": ");
  j->pending_key = 1;
}

static void open(json *j, const char *c)
{
  before_value(j, j->pending_key);
  j->pending_key = 0;
  put(j, "%s", c);
  if (j->depth < 31) {
    j->depth++;
  }
  j->first[j->depth] = 1;
}

static void close_(json *j, const char *c)
{
  int empty = j->first[j->depth];
  j->depth--;
  if (!empty) {
    indent(j);
  }
  put(j, "%s", c);
}

void json_begin_object(json *j)
{
  open(j, "{");
}
void json_end_object(json *j)
{
  close_(j, "}");
}
void json_begin_array(json *j)
{
  open(j, "[");
}
void json_end_array(json *j)
{
  close_(j, "]");
}

void json_string(json *j, const char *s)
{
  before_value(j, j->pending_key);
  j->pending_key = 0;
  put(j, "\"");
  for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; ++p) {
    if (*p == '"' || *p == '\\') {
      put(j, "\\%c", *p);
    } else if (*p < 0x20) {
      put(j, "\\u%04x", *p);
    } else {
      put(j, "%c", *p);
    }
  }
  put(j, "\"");
}

void json_number(json *j, double v)
{
  before_value(j, j->pending_key);
  j->pending_key = 0;
  if (isfinite(v)) {
    put(j, "%.10g", v);
  } else {
    put(j, "null");
  }
}

void json_integer(json *j, long long v)
{
  before_value(j, j->pending_key);
  j->pending_key = 0;
  put(j, "%lld", v);
}

void json_bool(json *j, int v)
{
  before_value(j, j->pending_key);
  j->pending_key = 0;
  put(j, v ? "true" : "false");
}

void json_null(json *j)
{
  before_value(j, j->pending_key);
  j->pending_key = 0;
  put(j, "null");
}

void json_raw(json *j, const char *text, size_t len)
{
  before_value(j, j->pending_key);
  j->pending_key = 0;
  put(j, "%.*s", (int)len, text);
}
