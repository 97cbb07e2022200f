/*
 * The perfmodel's JSON reader (nestcl/pm_json.h): a recursive descent parser
 * with a depth bound, strict number and string grammar (\uXXXX escapes
 * decoded to UTF-8, surrogate pairs joined, a lone surrogate refused), and
 * errors that give line and column. Inputs are small (a profile, a results
 * file, one sweep line), so the tree is plain heap nodes.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nestcl/pm_json.h"

typedef struct parser {
  const char *s;
  size_t len, pos;
  char *err;
  size_t errlen;
  int failed;
} parser;

static void fail(parser *p, const char *fmt, ...)
{
  if (p->failed) {
    return;
  }
  p->failed = 1;
  size_t line = 1, col = 1;
  for (size_t i = 0; i < p->pos && i < p->len; ++i) {
    if (p->s[i] == '\n') {
      line++;
      col = 1;
    } else {
      col++;
    }
  }
  char msg[200];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (p->err && p->errlen) {
    snprintf(p->err, p->errlen, "line %zu, column %zu: %s", line, col, msg);
  }
}

static void skip_ws(parser *p)
{
  while (p->pos < p->len) {
    char c = p->s[p->pos];
    if (c != ' ' && c != '\t' && c != '\n' && c != '\r') {
      break;
    }
    p->pos++;
  }
}

static int peek(parser *p)
{
  return p->pos < p->len ? (unsigned char)p->s[p->pos] : -1;
}

static int literal(parser *p, const char *word)
{
  size_t n = strlen(word);
  if (p->len - p->pos < n || memcmp(p->s + p->pos, word, n) != 0) {
    fail(p, "invalid literal");
    return -1;
  }
  p->pos += n;
  return 0;
}

static int parse_number(parser *p, pmj *v)
{
  size_t start = p->pos;
  if (peek(p) == '-') {
    p->pos++;
  }
  if (peek(p) == '0') {
    p->pos++;
  } else if (peek(p) >= '1' && peek(p) <= '9') {
    while (peek(p) >= '0' && peek(p) <= '9')
      p->pos++;
  } else {
    fail(p, "invalid number");
    return -1;
  }
  if (peek(p) == '.') {
    p->pos++;
    if (!(peek(p) >= '0' && peek(p) <= '9')) {
      fail(p, "invalid number: no digit after '.'");
      return -1;
    }
    while (peek(p) >= '0' && peek(p) <= '9')
      p->pos++;
  }
  if (peek(p) == 'e' || peek(p) == 'E') {
    p->pos++;
    if (peek(p) == '+' || peek(p) == '-')
      p->pos++;
    if (!(peek(p) >= '0' && peek(p) <= '9')) {
      fail(p, "invalid number: no digit in the exponent");
      return -1;
    }
    while (peek(p) >= '0' && peek(p) <= '9')
      p->pos++;
  }
  char buf[64];
  size_t n = p->pos - start;
  if (n >= sizeof buf) {
    fail(p, "number too long");
    return -1;
  }
  memcpy(buf, p->s + start, n);
  buf[n] = 0;
  errno = 0;
  v->type = PMJ_NUMBER;
  v->num = strtod(buf, NULL);
  if (!isfinite(v->num)) {
    fail(p, "number out of range");
    return -1;
  }
  return 0;
}

static int hex4(parser *p, unsigned *out)
{
  if (p->len - p->pos < 4) {
    fail(p, "truncated \\u escape");
    return -1;
  }
  unsigned u = 0;
  for (int k = 0; k < 4; ++k) {
    char c = p->s[p->pos++];
    u <<= 4;
    if (c >= '0' && c <= '9')
      u |= (unsigned)(c - '0');
    else if (c >= 'a' && c <= 'f')
      u |= (unsigned)(c - 'a' + 10);
    else if (c >= 'A' && c <= 'F')
      u |= (unsigned)(c - 'A' + 10);
    else {
      fail(p, "invalid \\u escape");
      return -1;
    }
  }
  *out = u;
  return 0;
}

/* Parses a string at p->pos (on the opening quote) into a new heap string. */
static char *parse_string(parser *p)
{
  p->pos++; /* " */
  size_t cap = 16, n = 0;
  char *out = malloc(cap);
  if (!out) {
    fail(p, "out of memory");
    return NULL;
  }
  for (;;) {
    if (p->pos >= p->len) {
      fail(p, "unterminated string");
      break;
    }
    unsigned char c = (unsigned char)p->s[p->pos++];
    unsigned cp;
    char enc[4];
    int ne = 0;
    if (c == '"') {
      out[n] = 0;
      return out;
    }
    if (c < 0x20) {
      fail(p, "control character in string");
      break;
    }
    if (c != '\\') {
      enc[0] = (char)c;
      ne = 1;
    } else {
      if (p->pos >= p->len) {
        fail(p, "unterminated escape");
        break;
      }
      char x = p->s[p->pos++];
      switch (x) {
      case '"':
        enc[0] = '"';
        ne = 1;
        break;
      case '\\':
        enc[0] = '\\';
        ne = 1;
        break;
      case '/':
        enc[0] = '/';
        ne = 1;
        break;
      case 'b':
        enc[0] = '\b';
        ne = 1;
        break;
      case 'f':
        enc[0] = '\f';
        ne = 1;
        break;
      case 'n':
        enc[0] = '\n';
        ne = 1;
        break;
      case 'r':
        enc[0] = '\r';
        ne = 1;
        break;
      case 't':
        enc[0] = '\t';
        ne = 1;
        break;
      case 'u':
        if (hex4(p, &cp)) {
          goto bad;
        }
        if (cp >= 0xD800 && cp <= 0xDBFF) {
          unsigned lo;
          if (p->len - p->pos < 2 || p->s[p->pos] != '\\' || p->s[p->pos + 1] != 'u') {
            fail(p, "lone high surrogate");
            goto bad;
          }
          p->pos += 2;
          if (hex4(p, &lo)) {
            goto bad;
          }
          if (lo < 0xDC00 || lo > 0xDFFF) {
            fail(p, "invalid surrogate pair");
            goto bad;
          }
          cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
        } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
          fail(p, "lone low surrogate");
          goto bad;
        }
        if (cp == 0) {
          fail(p, "\\u0000 in string");
          goto bad;
        }
        if (cp < 0x80) {
          enc[ne++] = (char)cp;
        } else if (cp < 0x800) {
          enc[ne++] = (char)(0xC0 | (cp >> 6));
          enc[ne++] = (char)(0x80 | (cp & 0x3F));
        } else if (cp < 0x10000) {
          enc[ne++] = (char)(0xE0 | (cp >> 12));
          enc[ne++] = (char)(0x80 | ((cp >> 6) & 0x3F));
          enc[ne++] = (char)(0x80 | (cp & 0x3F));
        } else {
          enc[ne++] = (char)(0xF0 | (cp >> 18));
          enc[ne++] = (char)(0x80 | ((cp >> 12) & 0x3F));
          enc[ne++] = (char)(0x80 | ((cp >> 6) & 0x3F));
          enc[ne++] = (char)(0x80 | (cp & 0x3F));
        }
        break;
      default:
        fail(p, "invalid escape '\\%c'", x);
        goto bad;
      }
    }
    if (n + (size_t)ne + 1 > cap) {
      cap *= 2;
      char *t = realloc(out, cap);
      if (!t) {
        fail(p, "out of memory");
        break;
      }
      out = t;
    }
    memcpy(out + n, enc, (size_t)ne);
    n += (size_t)ne;
  }
bad:
  free(out);
  return NULL;
}

static void free_members(pmj *v)
{
  if (!v) {
    return;
  }
  for (size_t i = 0; i < v->n; ++i) {
    if (v->items)
      free_members(&v->items[i]);
    if (v->keys)
      free(v->keys[i]);
  }
  free(v->items);
  free(v->keys);
  free(v->str);
  memset(v, 0, sizeof *v);
}

static int parse_value(parser *p, pmj *v, int depth);

/* Appends a zeroed slot to an array or object; returns it or NULL. */
static pmj *grow(parser *p, pmj *v, size_t *cap, int with_keys)
{
  if (v->n == *cap) {
    size_t nc = *cap ? *cap * 2 : 4;
    pmj *items = realloc(v->items, nc * sizeof *items);
    if (!items) {
      fail(p, "out of memory");
      return NULL;
    }
    v->items = items;
    if (with_keys) {
      char **keys = realloc(v->keys, nc * sizeof *keys);
      if (!keys) {
        fail(p, "out of memory");
        return NULL;
      }
      v->keys = keys;
    }
    *cap = nc;
  }
  memset(&v->items[v->n], 0, sizeof v->items[v->n]);
  if (with_keys) {
    v->keys[v->n] = NULL;
  }
  return &v->items[v->n++];
}

static int parse_container(parser *p, pmj *v, int depth, int object)
{
  v->type = object ? PMJ_OBJECT : PMJ_ARRAY;
  p->pos++;
  size_t cap = 0;
  skip_ws(p);
  if (peek(p) == (object ? '}' : ']')) {
    p->pos++;
    return 0;
  }
  for (;;) {
    skip_ws(p);
    char *key = NULL;
    if (object) {
      if (peek(p) != '"') {
        fail(p, "expected a member name");
        return -1;
      }
      key = parse_string(p);
      if (!key) {
        return -1;
      }
      skip_ws(p);
      if (peek(p) != ':') {
        free(key);
        fail(p, "expected ':'");
        return -1;
      }
      p->pos++;
    }
    pmj *item = grow(p, v, &cap, object);
    if (!item) {
      free(key);
      return -1;
    }
    if (object) {
      v->keys[v->n - 1] = key;
    }
    if (parse_value(p, item, depth + 1)) {
      return -1;
    }
    skip_ws(p);
    int c = peek(p);
    if (c == ',') {
      p->pos++;
      continue;
    }
    if (c == (object ? '}' : ']')) {
      p->pos++;
      return 0;
    }
    fail(p, object ? "expected ',' or '}'" : "expected ',' or ']'");
    return -1;
  }
}

static int parse_value(parser *p, pmj *v, int depth)
{
  if (depth > PMJ_MAX_DEPTH) {
    fail(p, "nesting deeper than %d", PMJ_MAX_DEPTH);
    return -1;
  }
  skip_ws(p);
  int c = peek(p);
  switch (c) {
  case '{':
    return parse_container(p, v, depth, 1);
  case '[':
    return parse_container(p, v, depth, 0);
  case '"':
    v->type = PMJ_STRING;
    v->str = parse_string(p);
    return v->str ? 0 : -1;
  case 't':
    v->type = PMJ_BOOL;
    v->num = 1;
    return literal(p, "true");
  case 'f':
    v->type = PMJ_BOOL;
    v->num = 0;
    return literal(p, "false");
  case 'n':
    v->type = PMJ_NULL;
    return literal(p, "null");
  case -1:
    fail(p, "unexpected end of input");
    return -1;
  default:
    if (c == '-' || (c >= '0' && c <= '9')) {
      return parse_number(p, v);
    }
    fail(p, "unexpected character '%c'", c >= 32 && c < 127 ? c : '?');
    return -1;
  }
}

pmj *pmj_parse(const char *text, size_t len, char *err, size_t errlen)
{
  parser p = {text, len, 0, err, errlen, 0};
  pmj *v = calloc(1, sizeof *v);
  if (!v) {
    if (err && errlen)
      snprintf(err, errlen, "out of memory");
    return NULL;
  }
  if (!text) {
    fail(&p, "no input");
  } else if (parse_value(&p, v, 0) == 0) {
    skip_ws(&p);
    if (p.pos != p.len) {
      fail(&p, "trailing characters after the value");
    }
  }
  if (p.failed) {
    pmj_free(v);
    return NULL;
  }
  return v;
}

pmj *pmj_parse_file(const char *path, char *err, size_t errlen)
{
  FILE *f = fopen(path, "rb");
  if (!f) {
    snprintf(err, errlen, "cannot open %s: %s", path, strerror(errno));
    return NULL;
  }
  size_t cap = 4096, n = 0;
  char *buf = malloc(cap);
  while (buf) {
    if (n == cap) {
      char *t = cap < ((size_t)1 << 30) ? realloc(buf, cap * 2) : NULL;
      if (!t) {
        free(buf);
        buf = NULL;
        break;
      }
      buf = t;
      cap *= 2;
    }
    size_t r = fread(buf + n, 1, cap - n, f);
    n += r;
    if (r == 0) {
      break;
    }
  }
  int rerr = ferror(f);
  fclose(f);
  if (!buf || rerr) {
    free(buf);
    snprintf(err, errlen, "cannot read %s", path);
    return NULL;
  }
  char msg[256];
  pmj *v = pmj_parse(buf, n, msg, sizeof msg);
  free(buf);
  if (!v) {
    snprintf(err, errlen, "%s: %s", path, msg);
  }
  return v;
}

void pmj_free(pmj *v)
{
  if (v) {
    free_members(v);
    free(v);
  }
}

const pmj *pmj_get(const pmj *v, const char *key)
{
  if (!v || v->type != PMJ_OBJECT) {
    return NULL;
  }
  for (size_t i = 0; i < v->n; ++i) {
    if (strcmp(v->keys[i], key) == 0) {
      return &v->items[i];
    }
  }
  return NULL;
}

const pmj *pmj_path(const pmj *v, const char *path)
{
  char key[128];
  while (v && *path) {
    const char *dot = strchr(path, '.');
    size_t n = dot ? (size_t)(dot - path) : strlen(path);
    if (n >= sizeof key) {
      return NULL;
    }
    memcpy(key, path, n);
    key[n] = 0;
    v = pmj_get(v, key);
    path += n + (dot ? 1 : 0);
  }
  return v;
}

double pmj_number(const pmj *v, const char *path, int *ok)
{
  const pmj *x = pmj_path(v, path);
  if (!x || x->type != PMJ_NUMBER) {
    if (ok)
      *ok = 0;
    return 0.0;
  }
  return x->num;
}

const char *pmj_string(const pmj *v, const char *path)
{
  const pmj *x = pmj_path(v, path);
  return x && x->type == PMJ_STRING ? x->str : NULL;
}
