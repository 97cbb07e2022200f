/*
 * gen_text.h: a growing text for kernel sources generated at run time (the
 * block set's merged program, block_set_source.c; the device loop's merged
 * super step, engine/device_loop/resident_merge.c). put() appends printf-style;
 * an allocation failure sets oom and later puts do nothing, so a generator
 * checks once at its end. nestcl_cl_type_name() names a field's type there.
 */
#ifndef NESTCL_GEN_TEXT_H
#define NESTCL_GEN_TEXT_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "nestcl/model.h"

typedef struct text {
  char *s;
  size_t n, cap;
  int oom;
} text;

static void put(text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3), unused));
static void put(text *t, const char *fmt, ...)
{
  while (!t->oom) {
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(t->s ? t->s + t->n : NULL, t->s ? t->cap - t->n : 0, fmt, ap);
    va_end(ap);
    if (k < 0) {
      t->oom = 1;
      return;
    }
    if (t->s && t->n + (size_t)k < t->cap) {
      t->n += (size_t)k;
      return;
    }
    size_t cap = (t->cap ? 2 * t->cap : 4096) + (size_t)k;
    char *p = realloc(t->s, cap);
    if (!p) {
      t->oom = 1;
      return;
    }
    t->s = p;
    t->cap = cap;
  }
}

/* The OpenCL C type of a model's field. */
static const char *nestcl_cl_type_name(nestcl_field_type t) __attribute__((unused));
static const char *nestcl_cl_type_name(nestcl_field_type t)
{
  switch (t) {
  case NESTCL_T_DOUBLE:
    return "double";
  case NESTCL_T_LONG:
    return "long";
  case NESTCL_T_SIZE:
    return "ulong";
  default:
    return "int";
  }
}

#endif
