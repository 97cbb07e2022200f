/*
 * Growable strings for nestcl-translate. Every emitter builds its output in a
 * strbuf and writes it once, so a failed model never leaves a partial file.
 * Allocation failure aborts the translator (it is a short-lived CLI; there is
 * nothing sensible to recover).
 */
#ifndef NESTCL_TR_STRBUF_H
#define NESTCL_TR_STRBUF_H

#include <stdarg.h>
#include <stddef.h>

typedef struct strbuf {
  char *s;
  size_t len, cap;
} strbuf;

void sb_init(strbuf *b);
void sb_free(strbuf *b);
void sb_putn(strbuf *b, const char *s, size_t n);
void sb_puts(strbuf *b, const char *s);
void sb_putc(strbuf *b, char c);
void sb_printf(strbuf *b, const char *fmt, ...)
#if defined(__GNUC__)
  __attribute__((format(printf, 2, 3)))
#endif
  ;
/* Appends s as the body of a C string literal (escapes, no quotes). */
void sb_put_c_escaped(strbuf *b, const char *s);
/* Returns the string and resets b (caller frees). */
char *sb_take(strbuf *b);
/* Never NULL. */
const char *sb_str(const strbuf *b);

void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t sz);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
char *xasprintf(const char *fmt, ...)
#if defined(__GNUC__)
  __attribute__((format(printf, 1, 2)))
#endif
  ;

#endif
