/*
 * Growable strings and checked allocation for nestcl-translate (see strbuf.h).
 */
#include "strbuf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void *xmalloc(size_t n)
{
  void *p = malloc(n ? n : 1);
  if (!p) {
    fprintf(stderr, "error: out of memory\n");
    exit(1);
  }
  return p;
}

void *xcalloc(size_t n, size_t sz)
{
  void *p = calloc(n ? n : 1, sz ? sz : 1);
  if (!p) {
    fprintf(stderr, "error: out of memory\n");
    exit(1);
  }
  return p;
}

void *xrealloc(void *p, size_t n)
{
  p = realloc(p, n ? n : 1);
  if (!p) {
    fprintf(stderr, "error: out of memory\n");
    exit(1);
  }
  return p;
}

char *xstrdup(const char *s)
{
  return xstrndup(s, strlen(s));
}

char *xstrndup(const char *s, size_t n)
{
  char *p = xmalloc(n + 1);
  memcpy(p, s, n);
  p[n] = 0;
  return p;
}

char *xasprintf(const char *fmt, ...)
{
  strbuf b;
  va_list ap;
  sb_init(&b);
  va_start(ap, fmt);
  {
    va_list ap2;
    int n;
    va_copy(ap2, ap);
    n = vsnprintf(NULL, 0, fmt, ap2);
    va_end(ap2);
    if (n > 0) {
      b.s = xrealloc(b.s, (size_t)n + 1);
      b.cap = (size_t)n + 1;
      vsnprintf(b.s, b.cap, fmt, ap);
      b.len = (size_t)n;
    }
  }
  va_end(ap);
  return sb_take(&b);
}

void sb_init(strbuf *b)
{
  b->s = NULL;
  b->len = b->cap = 0;
}

void sb_free(strbuf *b)
{
  free(b->s);
  sb_init(b);
}

static void grow(strbuf *b, size_t extra)
{
  if (b->len + extra + 1 > b->cap) {
    size_t cap = b->cap ? b->cap * 2 : 256;
    while (cap < b->len + extra + 1)
      cap *= 2;
    b->s = xrealloc(b->s, cap);
    b->cap = cap;
  }
}

void sb_putn(strbuf *b, const char *s, size_t n)
{
  grow(b, n);
  memcpy(b->s + b->len, s, n);
  b->len += n;
  b->s[b->len] = 0;
}

void sb_puts(strbuf *b, const char *s)
{
  sb_putn(b, s, strlen(s));
}

void sb_putc(strbuf *b, char c)
{
  sb_putn(b, &c, 1);
}

void sb_printf(strbuf *b, const char *fmt, ...)
{
  va_list ap, ap2;
  int n;
  va_start(ap, fmt);
  va_copy(ap2, ap);
  n = vsnprintf(NULL, 0, fmt, ap2);
  va_end(ap2);
  if (n > 0) {
    grow(b, (size_t)n);
    vsnprintf(b->s + b->len, (size_t)n + 1, fmt, ap);
    b->len += (size_t)n;
  }
  va_end(ap);
}

void sb_put_c_escaped(strbuf *b, const char *s)
{
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '\\')
      sb_puts(b, "\\\\");
    else if (c == '"')
      sb_puts(b, "\\\"");
    else if (c == '\n')
      sb_puts(b, "\\n\"\n\"");
    else if (c == '\t')
      sb_puts(b, "\\t");
    else if (c < 32 || c >= 127)
      sb_printf(b, "\\%03o", c);
    else if (c == '?' && s[1] == '?')
      sb_puts(b, "?\"\""); /* no trigraphs */
    else
      sb_putc(b, (char)c);
  }
}

char *sb_take(strbuf *b)
{
  char *s = b->s ? b->s : xstrdup("");
  sb_init(b);
  return s;
}

const char *sb_str(const strbuf *b)
{
  return b->s ? b->s : "";
}
