/*
 * Source-range rewriting of model code (see rewrite.h). render() copies the
 * text of a node, recursing into its children in source order; a node that
 * needs translating is replaced as a whole by text built from its rendered
 * operands. Nodes from macro expansions are recognised by their extent (the
 * expansion's range, recorded by parse.c) and handled by macro name.
 *
 * Every identifier the generated code introduces is one of the kernel's fixed
 * arguments (nestcl/update_args.h), a name of its own (is_reserved_name),
 * the neuron index nestcl_i, a field array (S__x, P__x, V__x, B__x) or a
 * nestcl_/NESTCL_ helper. Model locals named like one of the arguments are
 * renamed nestcl_l_<name>; check.c refuses locals with the nestcl_ prefix.
 */
#include "rewrite.h"

#include "mathtable.h"
#include "parse.h"
#include "uargs.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct rw_alias {
  CXCursor var;
  int group;  /* first channel group of the buffer */
  char *slot; /* rendered slot expression */
} rw_alias;

typedef struct rw_subst {
  CXCursor parm;
  char *text;
} rw_subst;

struct rw_ctx {
  ir_model *m;
  rw_mode mode;
  CXCursor fn;
  int fatal;
  int n_errors;
  char *first_error;
  unsigned char *used;
  int transcendental;
  rw_alias *aliases;
  int n_aliases;
  rw_subst *substs;
  int n_substs;
  int depth;
  char label[64]; /* RW_SET: where a return statement goes */
  char *lag_var;  /* RW_UPDATE: the variable of the lag loop (for random draws) */
  CXCursor target_var; /* RW_SEND: the local that holds get_target( t ) */
  CXCursor node_var;   /* RW_DYN: the local that holds the node (reinterpret_cast of the params pointer) */
  int multiplicity;    /* RW_UPDATE: update() calls SpikeEvent::set_multiplicity */
  int offsets;         /* RW_UPDATE: update() (or a helper of it) calls SpikeEvent::set_offset */
  int helper;          /* RW_UPDATE: rendering a method that update() calls, as a function of its own */
  CXCursor lag_loop;   /* RW_UPDATE: update()'s lag loop (a null cursor in a helper) */
  int rng_sites;  /* random draws rendered so far: each call site gets its own stream */
  /* statements left out of this render, with why (plan_drops) */
  CXCursor *dropped;
  const char **drop_why;
  int n_dropped;
};

static void plan_drops(rw_ctx *c);
static int is_gap_input(rw_ctx *c, CXCursor ref);
static int pure_expr(CXCursor e);

/* The lag loop of update(): the for statement whose condition reads the 'to' parameter. */
typedef struct lag_find {
  CXCursor to;
  char *name;
  CXCursor loop;
} lag_find;

static enum CXChildVisitResult visit_find_lag(CXCursor c, CXCursor parent, CXClientData data)
{
  lag_find *lf = data;
  (void)parent;
  if (lf->name)
    return CXChildVisit_Break;
  if (clang_getCursorKind(c) == CXCursor_ForStmt) {
    cursor_kids k = cursor_children(c);
    if (k.n >= 2 && clang_getCursorKind(k.c[0]) == CXCursor_DeclStmt) {
      cursor_kids d = cursor_children(k.c[0]);
      if (cursor_refers_to(k.c[1], lf->to) && d.n >= 1 && clang_getCursorKind(d.c[0]) == CXCursor_VarDecl) {
        lf->name = cursor_spelling(d.c[0]);
        lf->loop = c;
      }
      free(d.c);
    }
    free(k.c);
  }
  return CXChildVisit_Recurse;
}

/* A call of the method named name (set_multiplicity, set_offset) below a cursor. */
typedef struct method_find {
  const char *name;
  int hit;
} method_find;

static enum CXChildVisitResult visit_find_method(CXCursor x, CXCursor parent, CXClientData data)
{
  method_find *mf = data;
  (void)parent;
  if (clang_getCursorKind(x) == CXCursor_CallExpr) {
    char *n = cursor_spelling(clang_getCursorReferenced(x));
    if (!strcmp(n, mf->name))
      mf->hit = 1;
    free(n);
    if (mf->hit)
      return CXChildVisit_Break;
  }
  return CXChildVisit_Recurse;
}

static int calls_method(CXCursor fn, const char *name)
{
  method_find mf;
  mf.name = name;
  mf.hit = 0;
  clang_visitChildren(fn, visit_find_method, &mf);
  return mf.hit;
}

typedef struct class_calls {
  const char *name;
  int hit;
} class_calls;

static enum CXChildVisitResult visit_class_method(CXCursor x, CXCursor parent, CXClientData data)
{
  class_calls *cc = data;
  (void)parent;
  if (clang_getCursorKind(x) == CXCursor_CXXMethod) {
    CXCursor def = clang_getCursorDefinition(x);
    if (!clang_Cursor_isNull(def) && calls_method(def, cc->name))
      cc->hit = 1;
  }
  return cc->hit ? CXChildVisit_Break : CXChildVisit_Continue;
}

/* Whether update() or any method of the model class (the helpers update() calls) calls name. */
static int model_calls(ir_model *m, CXCursor fn, const char *name)
{
  class_calls cc;
  cc.name = name;
  cc.hit = calls_method(fn, name);
  if (!cc.hit && !clang_Cursor_isNull(m->cls))
    clang_visitChildren(m->cls, visit_class_method, &cc);
  return cc.hit;
}

rw_ctx *rw_new(ir_model *m, rw_mode mode, CXCursor fn, int fatal)
{
  rw_ctx *c = xcalloc(1, sizeof *c);
  c->m = m;
  c->mode = mode;
  c->fn = fn;
  c->fatal = fatal;
  c->used = xcalloc((size_t)(m->n_fields ? m->n_fields : 1), 1);
  c->target_var = clang_getNullCursor();
  c->node_var = clang_getNullCursor();
  c->lag_loop = clang_getNullCursor();
  if (mode == RW_UPDATE) {
    /* update() sets the multiplicity (the offset) of the spikes it sends: each SpikeEvent local gets a
     * count (an offset) */
    c->multiplicity = model_calls(m, fn, "set_multiplicity");
    if (c->multiplicity)
      m->multiplicity = 1;
    c->offsets = model_calls(m, fn, "set_offset");
    if (c->offsets)
      m->spike_offsets = 1;
  }
  if (mode == RW_UPDATE && clang_Cursor_getNumArguments(fn) >= 3) {
    lag_find lf;
    lf.to = clang_Cursor_getArgument(fn, 2);
    lf.name = NULL;
    lf.loop = clang_getNullCursor();
    clang_visitChildren(fn, visit_find_lag, &lf);
    c->lag_var = lf.name;
    c->lag_loop = lf.loop;
  }
  if (mode == RW_UPDATE && m->n_bound && clang_equalCursors(fn, m->methods[IR_M_UPDATE]))
    for (int k = 0; k < m->n_bound; k++) {
      /* update() passes a constant here (parse.c, detect_update_forward) */
      char *v = xasprintf("%lld", m->bound_value[k]);
      rw_add_subst(c, m->bound_parm[k], v);
      free(v);
    }
  if (mode == RW_UPDATE || mode == RW_DYN || mode == RW_INIT)
    plan_drops(c);
  return c;
}

void rw_free(rw_ctx *c)
{
  int k;
  if (!c)
    return;
  for (k = 0; k < c->n_aliases; k++)
    free(c->aliases[k].slot);
  for (k = 0; k < c->n_substs; k++)
    free(c->substs[k].text);
  free(c->aliases);
  free(c->substs);
  free(c->dropped);
  free(c->drop_why);
  free(c->used);
  free(c->first_error);
  free(c->lag_var);
  free(c);
}

int rw_errors(const rw_ctx *c) { return c->n_errors; }

void rw_set_helper(rw_ctx *c)
{
  c->helper = 1;
  free(c->lag_var);
  c->lag_var = xstrdup("nestcl_lag");
}
void rw_set_return_label(rw_ctx *c, const char *label) { snprintf(c->label, sizeof c->label, "%s", label); }
const char *rw_first_error(const rw_ctx *c) { return c->first_error ? c->first_error : ""; }
const unsigned char *rw_used_fields(const rw_ctx *c) { return c->used; }
int rw_used_transcendental(const rw_ctx *c) { return c->transcendental; }

static void error_at(rw_ctx *c, CXCursor at, const char *construct, const char *why)
{
  char *where = cursor_where(at);
  char *t = xasprintf("%s: error: %s is not supported on the device (%s)", where, construct, why);
  int k, dup = 0;
  c->n_errors++;
  if (c->fatal) {
    for (k = 0; k < c->m->n_diags; k++)
      if (!strcmp(c->m->diags[k].text, t))
        dup = 1;
    if (!dup)
      ir_diag_add(c->m, 1, t);
  } else if (!c->first_error) {
    c->first_error = xasprintf("%s is not supported (%s) at %s", construct, why, where);
  }
  free(t);
  free(where);
}

static void warning_at(rw_ctx *c, CXCursor at, const char *text)
{
  char *where = cursor_where(at);
  char *t = xasprintf("%s: warning: %s", where, text);
  int k;
  for (k = 0; k < c->m->n_diags; k++)
    if (!strcmp(c->m->diags[k].text, t))
      break;
  if (c->fatal && k == c->m->n_diags)
    ir_diag_add(c->m, 0, t);
  free(t);
  free(where);
}

CXCursor rw_body_of(CXCursor fn)
{
  cursor_kids k = cursor_children(fn);
  CXCursor r = clang_getNullCursor();
  int j;
  for (j = 0; j < k.n; j++)
    if (clang_getCursorKind(k.c[j]) == CXCursor_CompoundStmt)
      r = k.c[j];
  free(k.c);
  return r;
}

/* ---- source text ---- */

static const char *file_text(rw_ctx *c, CXFile f, size_t *size)
{
  return clang_getFileContents(c->m->tu->tu, f, size);
}

static int is_ident_char(char ch)
{
  return isalnum((unsigned char)ch) || ch == '_';
}

/* Copies text between nodes: C++'s alternative operator spellings become C's. */
static void emit_gap(const char *t, unsigned from, unsigned to, strbuf *out)
{
  unsigned p = from;
  while (p < to) {
    char ch = t[p];
    if (ch == '/' && p + 1 < to && t[p + 1] == '/') {
      unsigned q = p;
      while (q < to && t[q] != '\n')
        q++;
      sb_putn(out, t + p, q - p);
      p = q;
    } else if (ch == '/' && p + 1 < to && t[p + 1] == '*') {
      unsigned q = p + 2;
      while (q + 1 < to && !(t[q] == '*' && t[q + 1] == '/'))
        q++;
      q = q + 2 <= to ? q + 2 : to;
      sb_putn(out, t + p, q - p);
      p = q;
    } else if (ch == '"' || ch == '\'') {
      unsigned q = p + 1;
      while (q < to && t[q] != ch) {
        if (t[q] == '\\')
          q++;
        q++;
      }
      q = q + 1 <= to ? q + 1 : to;
      sb_putn(out, t + p, q - p);
      p = q;
    } else if (is_ident_char(ch) && (p == from || !is_ident_char(t[p - 1]))) {
      static const char *const alt[][2] = {{"and", "&&"}, {"or", "||"}, {"not", "!"}, {"not_eq", "!="},
                                           {"bitand", "&"}, {"bitor", "|"}, {"xor", "^"}, {"compl", "~"},
                                           {"and_eq", "&="}, {"or_eq", "|="}, {"xor_eq", "^="}};
      unsigned q = p;
      size_t k, len;
      while (q < to && is_ident_char(t[q]))
        q++;
      len = q - p;
      for (k = 0; k < sizeof alt / sizeof alt[0]; k++)
        if (strlen(alt[k][0]) == len && !strncmp(t + p, alt[k][0], len))
          break;
      if (k < sizeof alt / sizeof alt[0])
        sb_puts(out, alt[k][1]);
      else
        sb_putn(out, t + p, len);
      p = q;
    } else {
      sb_putc(out, ch);
      p++;
    }
  }
}

static const ir_macro *macro_at(rw_ctx *c, CXFile f, unsigned b, unsigned e)
{
  int k;
  for (k = 0; k < c->m->tu->n_macros; k++) {
    const ir_macro *mc = &c->m->tu->macros[k];
    if (mc->begin == b && mc->end == e && clang_File_isEqual(mc->file, f))
      return mc;
  }
  return NULL;
}

/* Names the generated code gives its own variables and arguments: the
   update's fixed arguments and the names below (handler, getter and C-loop
   parameters, the spike offsets). */
static int is_reserved_name(const char *n)
{
  static const char *const reserved[] = {"weight", "current", "rport", "channel", "value",
                                         "name",   "fields",  "offset", "spike_offsets"};
  size_t k;
  if (tr_is_uarg_name(n))
    return 1;
  for (k = 0; k < sizeof reserved / sizeof reserved[0]; k++)
    if (!strcmp(n, reserved[k]))
      return 1;
  return 0;
}

static int is_local_decl(CXCursor d)
{
  enum CXCursorKind k = clang_getCursorKind(d);
  enum CXCursorKind pk = clang_getCursorKind(clang_getCursorSemanticParent(d));
  return k == CXCursor_VarDecl &&
         (pk == CXCursor_FunctionDecl || pk == CXCursor_CXXMethod || pk == CXCursor_Constructor);
}

/* ---- init_buffers_(): what the runtime sets up itself ---- */

typedef struct setup_find {
  ir_model *m;
  int found;
} setup_find;

static enum CXChildVisitResult visit_runtime_setup(CXCursor x, CXCursor parent, CXClientData data)
{
  setup_find *sf = data;
  enum CXCursorKind k = clang_getCursorKind(x);
  (void)parent;
  if (k == CXCursor_MemberRefExpr) {
    CXCursor r = clang_getCursorReferenced(x);
    CXCursor owner = clang_getCanonicalCursor(clang_getCursorSemanticParent(r));
    /* a member of Buffers_ without SoA layout: an input buffer, the logger, a GSL object */
    if (clang_getCursorKind(r) == CXCursor_FieldDecl && !clang_Cursor_isNull(sf->m->structs[3]) &&
        clang_equalCursors(owner, clang_getCanonicalCursor(sf->m->structs[3])) && ir_find_field(sf->m, r) < 0)
      sf->found = 1;
  } else if (k == CXCursor_CallExpr) {
    char *n = cursor_spelling(clang_getCursorReferenced(x));
    if (!strncmp(n, "gsl_", 4) || !strcmp(n, "clear_history"))
      sf->found = 1;
    free(n);
  }
  return sf->found ? CXChildVisit_Break : CXChildVisit_Recurse;
}

int rw_is_runtime_setup(ir_model *m, CXCursor stmt)
{
  setup_find sf;
  sf.m = m;
  sf.found = 0;
  if (visit_runtime_setup(stmt, clang_getNullCursor(), &sf) == CXChildVisit_Recurse)
    clang_visitChildren(stmt, visit_runtime_setup, &sf);
  return sf.found;
}

/* ---- helpers on cursors ---- */

static int is_model_scope(rw_ctx *c, CXCursor decl)
{
  CXCursor p = clang_getCanonicalCursor(decl);
  int k;
  if (clang_equalCursors(p, clang_getCanonicalCursor(c->m->cls)))
    return 1;
  for (k = 0; k < 4; k++)
    if (!clang_Cursor_isNull(c->m->structs[k]) && clang_equalCursors(p, clang_getCanonicalCursor(c->m->structs[k])))
      return 1;
  return !clang_Cursor_isNull(c->m->cp_cls) && clang_equalCursors(p, clang_getCanonicalCursor(c->m->cp_cls));
}

static char *decl_name_of_type(CXType t)
{
  if (t.kind == CXType_LValueReference || t.kind == CXType_RValueReference || t.kind == CXType_Pointer)
    t = clang_getPointeeType(t);
  return cursor_spelling(clang_getTypeDeclaration(clang_getCanonicalType(t)));
}

/* Whether t (through a reference) is NEST's Time. */
int rw_is_time_type(CXType t)
{
  char *n = decl_name_of_type(t);
  int r = !strcmp(n, "Time");
  free(n);
  return r;
}

/* The canonical C spelling of a type ("unsigned long", "double"), malloc'ed. */
static char *c_type_spelling(CXType t)
{
  CXString s = clang_getTypeSpelling(clang_getCanonicalType(t));
  char *r = xstrdup(clang_getCString(s));
  clang_disposeString(s);
  return r;
}

static int is_host_mode(rw_ctx *c)
{
  return c->mode == RW_PRERUN || c->mode == RW_DEFAULTS || c->mode == RW_GET || c->mode == RW_SET ||
         c->mode == RW_INIT || c->mode == RW_RECORD;
}

void rw_add_subst(rw_ctx *c, CXCursor parm, const char *text)
{
  c->substs = xrealloc(c->substs, sizeof *c->substs * (size_t)(c->n_substs + 1));
  c->substs[c->n_substs].parm = parm;
  c->substs[c->n_substs].text = xasprintf("(%s)", text);
  c->n_substs++;
}

/* RW_RECORD: the row of field fi in one lag's recorded values ("3", "(2 + 1 * (size_t)K)"), or NULL. */
static char *record_offset(const ir_model *m, int fi)
{
  int fixed = 0, kk = 0;
  for (int r = 0; r < m->n_recordables; r++) {
    const ir_field *f = &m->fields[m->recordables[r]];
    int a, b;
    if (m->recordables[r] == fi)
      return kk ? xasprintf("(%d + %d * (size_t)K)", fixed, kk) : xasprintf("%d", fixed);
    ir_field_len(f, &a, &b);
    fixed += a;
    kk += b;
  }
  return NULL;
}

int rw_dyn_by_value(const ir_field *f)
{
  return f->role == IR_ROLE_PARAMETER && f->array_len == 0 && !f->written_in_update;
}

static void render_to(rw_ctx *c, CXCursor cur, char **out)
{
  strbuf b;
  sb_init(&b);
  rw_render(c, cur, &b);
  *out = sb_take(&b);
}

/* The field access text for field fi (scalar, or element idx of an array). */
static void emit_field(rw_ctx *c, CXCursor at, int fi, const char *idx, strbuf *out)
{
  ir_field *f = &c->m->fields[fi];
  c->used[fi] = 1;
  if (c->mode == RW_ROUTE_SPIKE || c->mode == RW_ROUTE_CURRENT) {
    char *what = xasprintf("field '%s::%s' in a handler", f->struct_name, f->member);
    error_at(c, at, what, "event routing has no access to node state");
    free(what);
    return;
  }
  if ((c->mode == RW_SET || c->mode == RW_SEND || c->m->kind == IR_KIND_SYNAPSE) && f->array_len == 0) {
    /* set_status() works on copies of the slot's scalars (NEST's ptmp/stmp); a
     * synapse's send() on its own copy of the synapse (nestcl_self->x) and the
     * common properties (nestcl_cp->x). */
    sb_puts(out, f->c_name);
    return;
  }
  if (c->mode == RW_RECORD) {
    /* what update() recorded at this lag, or a parameter that update() never writes */
    char *off = record_offset(c->m, fi);
    if (off && f->array_len == 0)
      sb_printf(out, "nestcl_rec[(size_t)(%s) * n + nestcl_i]", off);
    else if (off && idx)
      sb_printf(out, "nestcl_rec[((size_t)(%s) + (size_t)(%s)) * n + nestcl_i]", off, idx);
    else if (!off && f->array_len == 0 && rw_dyn_by_value(f))
      sb_printf(out, "%s[nestcl_i]", f->c_name);
    else {
      char *what = xasprintf("field '%s::%s' in a recordable's getter", f->struct_name, f->member);
      error_at(c, at, what, off ? "only element accesses map to the SoA layout" : "it is not recorded by update()");
      free(what);
    }
    free(off);
    return;
  }
  if (c->mode == RW_DYN) {
    /* the dynamics reads the neuron through its context (see translate.c) */
    if (f->array_len != 0 && idx)
      sb_printf(out, "nestcl_ctx->%s[(size_t)(%s) * nestcl_ctx->n + nestcl_ctx->i]", f->c_name, idx);
    else if (f->array_len == 0)
      sb_printf(out, rw_dyn_by_value(f) ? "nestcl_ctx->%s" : "nestcl_ctx->%s[nestcl_ctx->i]", f->c_name);
    else {
      char *what = xasprintf("array field '%s::%s' without a subscript", f->struct_name, f->member);
      error_at(c, at, what, "only element accesses map to the SoA layout");
      free(what);
    }
    return;
  }
  if (f->array_len != 0) {
    if (!idx) {
      char *what = xasprintf("array field '%s::%s' without a subscript", f->struct_name, f->member);
      error_at(c, at, what, "only element accesses map to the SoA layout");
      free(what);
      return;
    }
    sb_printf(out, "%s[(size_t)(%s) * n + nestcl_i]", f->c_name, idx);
    return;
  }
  if (c->mode == RW_UPDATE && f->role == IR_ROLE_PARAMETER && !f->written_in_update)
    sb_printf(out, "NESTCL_P_%s", f->member);
  else
    sb_printf(out, "%s[nestcl_i]", f->c_name);
}

/* ---- calls ---- */

static CXCursor member_base(CXCursor call)
{
  cursor_kids k = cursor_children(call);
  CXCursor r = clang_getNullCursor();
  if (k.n >= 1 && clang_getCursorKind(k.c[0]) == CXCursor_MemberRefExpr) {
    cursor_kids b = cursor_children(k.c[0]);
    if (b.n >= 1)
      r = b.c[0];
    free(b.c);
  }
  free(k.c);
  return r;
}

/*
 * The name of what a call calls. A call whose callee depends on a template
 * parameter (get_target( t ) through ConnectionBase in a synapse template)
 * has no callee of its own: its name is that of the overload set its first
 * child refers to.
 */
static char *call_name(CXCursor call)
{
  char *n = cursor_spelling(call);
  if (*n)
    return n;
  free(n);
  cursor_kids k = cursor_children(call);
  n = xstrdup("");
  if (k.n >= 1) {
    CXCursor r = clang_getCursorReferenced(k.c[0]);
    if (!clang_Cursor_isNull(r)) {
      free(n);
      n = cursor_spelling(r);
    }
  }
  if (k.n >= 1 && !*n) {
    /* Base::f( ... ) in a template names a dependent member: its last identifier token */
    CXTranslationUnit tu = clang_Cursor_getTranslationUnit(k.c[0]);
    CXToken *toks = NULL;
    unsigned nt = 0;
    clang_tokenize(tu, clang_getCursorExtent(k.c[0]), &toks, &nt);
    if (nt && clang_getTokenKind(toks[nt - 1]) == CXToken_Identifier) {
      CXString ts = clang_getTokenSpelling(tu, toks[nt - 1]);
      free(n);
      n = xstrdup(clang_getCString(ts));
      clang_disposeString(ts);
    }
    if (toks)
      clang_disposeTokens(tu, toks, nt);
  }
  free(k.c);
  return n;
}

static int callee_named(CXCursor call, const char *name)
{
  char *n = call_name(call);
  int r = !strcmp(n, name);
  free(n);
  return r;
}

/* Depth-first search for a call named name below cur. */
typedef struct find_call {
  const char *name;
  CXCursor found;
} find_call;

static enum CXChildVisitResult visit_find_call(CXCursor c, CXCursor parent, CXClientData data)
{
  find_call *fc = data;
  (void)parent;
  if ((clang_getCursorKind(c) == CXCursor_CallExpr) && callee_named(c, fc->name)) {
    fc->found = c;
    return CXChildVisit_Break;
  }
  return CXChildVisit_Recurse;
}

static CXCursor find_call_below(CXCursor cur, const char *name)
{
  find_call fc;
  fc.name = name;
  fc.found = clang_getNullCursor();
  if (clang_getCursorKind(cur) == CXCursor_CallExpr && callee_named(cur, name))
    return cur;
  clang_visitChildren(cur, visit_find_call, &fc);
  return fc.found;
}

/* Channel expression of a buffer access base (B_.b_ or B_.v_[k]); -1 if none. */
static int channel_of_base(rw_ctx *c, CXCursor base, char **chan)
{
  CXCursor b = cursor_strip(base);
  *chan = NULL;
  if (clang_getCursorKind(b) == CXCursor_MemberRefExpr) {
    int gi = ir_find_channel_group(c->m, clang_getCursorReferenced(b));
    if (gi >= 0 && c->m->channels[gi].kind == IR_BUF_RING) {
      *chan = ir_channel_base_expr(&c->m->channels[gi]);
      return gi;
    }
    return -1;
  }
  if (clang_getCursorKind(b) == CXCursor_CallExpr && callee_named(b, "operator[]")) {
    cursor_kids k = cursor_children(b);
    int gi = -1;
    if (k.n == 3 && clang_getCursorKind(cursor_strip(k.c[0])) == CXCursor_MemberRefExpr) {
      gi = ir_find_channel_group(c->m, clang_getCursorReferenced(cursor_strip(k.c[0])));
      if (gi >= 0 && c->m->channels[gi].kind == IR_BUF_VECTOR) {
        char *idx, *base_e = ir_channel_base_expr(&c->m->channels[gi]);
        render_to(c, k.c[2], &idx);
        if ((c->mode == RW_ROUTE_SPIKE || c->mode == RW_ROUTE_CURRENT) && c->m->channels[gi].count > 0)
          /* a handler's index into a vector of a fixed number of buffers (iaf_bw_2001's spikes_[ rport - 1 ]):
           * outside it, no channel (-1), which the runtime refuses, rather than a neighbouring buffer's */
          *chan = xasprintf("((long)(%s) >= 0 && (long)(%s) < %d ? %s + (int)(%s) : -1)", idx, idx,
                            c->m->channels[gi].count, base_e, idx);
        else
          *chan = xasprintf("%s + (%s)", base_e, idx);
        free(idx);
        free(base_e);
      } else {
        gi = -1;
      }
    }
    free(k.c);
    return gi;
  }
  return -1;
}

static void render_arg(rw_ctx *c, CXCursor call, int k, strbuf *out)
{
  rw_render(c, clang_Cursor_getArgument(call, (unsigned)k), out);
}

/* Whether expression e may change something: an assignment, ++ or --, or new. */
static enum CXChildVisitResult visit_side_effect(CXCursor x, CXCursor parent, CXClientData data)
{
  int *hit = data;
  enum CXCursorKind k = clang_getCursorKind(x);
  (void)parent;
  if (k == CXCursor_CompoundAssignOperator || k == CXCursor_CXXNewExpr || k == CXCursor_CXXDeleteExpr ||
      k == CXCursor_CXXThrowExpr || k == CXCursor_LambdaExpr ||
      (k == CXCursor_BinaryOperator && clang_getCursorBinaryOperatorKind(x) == CXBinaryOperator_Assign)) {
    *hit = 1;
    return CXChildVisit_Break;
  }
  if (k == CXCursor_UnaryOperator) {
    enum CXUnaryOperatorKind u = clang_getCursorUnaryOperatorKind(x);
    if (u == CXUnaryOperator_PostInc || u == CXUnaryOperator_PostDec || u == CXUnaryOperator_PreInc ||
        u == CXUnaryOperator_PreDec) {
      *hit = 1;
      return CXChildVisit_Break;
    }
  }
  return CXChildVisit_Recurse;
}

/*
 * `const T x = init;` of a scalar type whose initialiser changes nothing: the
 * local of a helper that is inlined as ((T)(init)) wherever it is read, so the
 * helper stays one expression with the same operations (no contraction: the
 * code is built with FP_CONTRACT OFF). NULL when the statement is not one.
 */
static CXCursor pure_const_local(CXCursor st, CXCursor *init)
{
  CXCursor none = clang_getNullCursor();
  if (clang_getCursorKind(st) != CXCursor_DeclStmt)
    return none;
  cursor_kids d = cursor_children(st);
  CXCursor v = d.n == 1 ? d.c[0] : none;
  free(d.c);
  if (clang_Cursor_isNull(v) || clang_getCursorKind(v) != CXCursor_VarDecl)
    return none;
  CXType t = clang_getCursorType(v);
  CXType ct = clang_getCanonicalType(t);
  if (!clang_isConstQualifiedType(t) ||
      !(ct.kind == CXType_Double || ct.kind == CXType_Int || ct.kind == CXType_Long || ct.kind == CXType_Bool))
    return none;
  cursor_kids ik = cursor_children(v);
  CXCursor e = none;
  for (int j = 0; j < ik.n; j++)
    if (clang_isExpression(clang_getCursorKind(ik.c[j])))
      e = ik.c[j];
  free(ik.c);
  int hit = 0;
  if (clang_Cursor_isNull(e))
    return none;
  clang_visitChildren(e, visit_side_effect, &hit);
  if (hit)
    return none;
  *init = e;
  return v;
}

static int inline_method(rw_ctx *c, CXCursor cur, CXCursor callee, strbuf *out)
{
  CXCursor def = clang_getCursorDefinition(callee);
  CXCursor body, ret, expr;
  cursor_kids stmts, rk;
  int k, nargs, saved_substs, n_locals = 0;
  CXCursor *locals = NULL, *inits = NULL;
  if (clang_Cursor_isNull(def) || c->depth > 8)
    return 0;
  body = rw_body_of(def);
  if (clang_Cursor_isNull(body))
    return 0;
  stmts = cursor_children(body);
  /* A single return, after nothing but assertions (dropped, as NDEBUG would) and
   * constant scalar locals whose initialisers change nothing (substituted). */
  for (k = 0; k + 1 < stmts.n; k++) {
    CXFile af;
    unsigned ab, ae;
    CXCursor init;
    CXCursor v = pure_const_local(stmts.c[k], &init);
    if (!clang_Cursor_isNull(v)) {
      locals = xrealloc(locals, sizeof *locals * (size_t)(n_locals + 1));
      inits = xrealloc(inits, sizeof *inits * (size_t)(n_locals + 1));
      locals[n_locals] = v;
      inits[n_locals++] = init;
      continue;
    }
    const ir_macro *mc = cursor_offsets(stmts.c[k], &af, &ab, &ae) ? NULL : macro_at(c, af, ab, ae);
    if (!mc || strcmp(mc->name, "assert")) {
      free(stmts.c);
      free(locals);
      free(inits);
      return 0;
    }
  }
  if (stmts.n < 1 || clang_getCursorKind(stmts.c[stmts.n - 1]) != CXCursor_ReturnStmt) {
    free(stmts.c);
    free(locals);
    free(inits);
    return 0;
  }
  ret = stmts.c[stmts.n - 1];
  free(stmts.c);
  rk = cursor_children(ret);
  if (rk.n != 1) {
    free(rk.c);
    free(locals);
    free(inits);
    return 0;
  }
  expr = rk.c[0];
  free(rk.c);
  nargs = clang_Cursor_getNumArguments(cur);
  saved_substs = c->n_substs;
  for (k = 0; k < nargs && k < clang_Cursor_getNumArguments(def); k++) {
    char *a;
    render_to(c, clang_Cursor_getArgument(cur, (unsigned)k), &a);
    c->substs = xrealloc(c->substs, sizeof *c->substs * (size_t)(c->n_substs + 1));
    c->substs[c->n_substs].parm = clang_Cursor_getArgument(def, (unsigned)k);
    c->substs[c->n_substs].text = xasprintf("(%s)", a);
    c->n_substs++;
    free(a);
  }
  c->depth++;
  for (k = 0; k < n_locals; k++) {
    /* each local's initialiser, in terms of the arguments and the locals before it */
    char *a;
    CXType ct = clang_getCanonicalType(clang_getCursorType(locals[k]));
    render_to(c, inits[k], &a);
    c->substs = xrealloc(c->substs, sizeof *c->substs * (size_t)(c->n_substs + 1));
    c->substs[c->n_substs].parm = locals[k];
    c->substs[c->n_substs].text = xasprintf("((%s)(%s))", ct.kind == CXType_Double ? "double"
                                                           : ct.kind == CXType_Long ? "nestcl_i64"
                                                                                     : "nestcl_i32", a);
    c->n_substs++;
    free(a);
  }
  free(locals);
  free(inits);
  sb_putc(out, '(');
  rw_render(c, expr, out);
  sb_putc(out, ')');
  c->depth--;
  while (c->n_substs > saved_substs)
    free(c->substs[--c->n_substs].text);
  return 1;
}

/* A call to the model's own getter whose body is `return <member>;` stands for that member. */
static CXCursor getter_target(rw_ctx *c, CXCursor e)
{
  CXCursor callee, def, body;
  cursor_kids st;
  if (clang_getCursorKind(e) != CXCursor_CallExpr || clang_Cursor_getNumArguments(e) != 0)
    return e;
  callee = clang_getCursorReferenced(e);
  if (clang_getCursorKind(callee) != CXCursor_CXXMethod || !is_model_scope(c, clang_getCursorSemanticParent(callee)))
    return e;
  def = clang_getCursorDefinition(callee);
  body = clang_Cursor_isNull(def) ? def : rw_body_of(def);
  if (clang_Cursor_isNull(body))
    return e;
  st = cursor_children(body);
  if (st.n == 1 && clang_getCursorKind(st.c[0]) == CXCursor_ReturnStmt) {
    cursor_kids r = cursor_children(st.c[0]);
    if (r.n == 1 && clang_getCursorKind(cursor_strip(r.c[0])) == CXCursor_MemberRefExpr &&
        ir_find_field(c->m, clang_getCursorReferenced(cursor_strip(r.c[0]))) >= 0)
      e = cursor_strip(r.c[0]);
    free(r.c);
  }
  free(st.c);
  return e;
}

/* The receptor count K in the code being rendered (the dynamics reads it from its context). */
static const char *receptor_count(const rw_ctx *c)
{
  return c->mode == RW_DYN ? "nestcl_ctx->K" : "K";
}

/*
 * Whether base is a container the runtime sizes with K: a per-receptor vector,
 * a std::vector<RingBuffer>, or an ODE state vector of A + B * K elements.
 * With len, its length as text.
 */
static int is_per_receptor_container_len(rw_ctx *c, CXCursor base, char **len)
{
  CXCursor b = getter_target(c, cursor_strip(base));
  CXCursor ref;
  int fi, gi;
  if (clang_getCursorKind(b) != CXCursor_MemberRefExpr)
    return 0;
  ref = clang_getCursorReferenced(b);
  fi = ir_find_field(c->m, ref);
  if (fi >= 0) {
    const ir_field *f = &c->m->fields[fi];
    if (f->array_len >= 0)
      return 0;
    if (len)
      *len = f->array_base ? xasprintf("((size_t)%d + (size_t)%d * (size_t)%s)", f->array_base, -f->array_len,
                                       receptor_count(c))
                           : f->array_len == -1 ? xasprintf("(size_t)%s", receptor_count(c))
                                                : xasprintf("((size_t)%d * (size_t)%s)", -f->array_len, receptor_count(c));
    return 1;
  }
  gi = ir_find_channel_group(c->m, ref);
  if (gi >= 0 && c->m->channels[gi].kind == IR_BUF_VECTOR) {
    if (len)
      *len = xasprintf("(size_t)%s", receptor_count(c));
    return 1;
  }
  return 0;
}

static int is_per_receptor_container(rw_ctx *c, CXCursor base)
{
  return is_per_receptor_container_len(c, base, NULL);
}

/* ---- calls: one rule per construct ---- */

/* What every call rule looks at: the call, what it calls, and its object (a null cursor for free functions). */
typedef struct call_info {
  CXCursor cur, callee, base;
  const char *name;  /* the callee's name (the call's spelling when it has none) */
  const char *qname; /* qualified name */
  const char *cls;   /* the callee's class */
  int nargs;
  enum CXCursorKind ck;
} call_info;

/*
 * A rule returns 1 when the call is its construct: it has then emitted the
 * translation, or reported why there is none. 0 lets the next rule try.
 */
typedef struct call_rule {
  const char *construct; /* what it translates */
  unsigned modes;        /* the modes it applies in (RW_BIT) */
  int (*apply)(rw_ctx *c, const call_info *ci, strbuf *out);
} call_rule;

#define RW_BIT(m) (1u << (m))
#define RW_ANY 0xffffffffu
#define RW_ROUTES (RW_BIT(RW_ROUTE_SPIKE) | RW_BIT(RW_ROUTE_CURRENT))
#define RW_HOST_INIT (RW_BIT(RW_PRERUN) | RW_BIT(RW_DEFAULTS))

static int name_is(const call_info *ci, const char *n) { return !strcmp(ci->name, n); }

/* x[ i ]: an SoA field, or a channel of an input buffer read through get_values_all_channels(). */
static int call_subscript(rw_ctx *c, const call_info *ci, strbuf *out)
{
  int k;
  if (!name_is(ci, "operator[]"))
    return 0;
  cursor_kids ch = cursor_children(ci->cur);
  if (ch.n == 3) {
    CXCursor b = getter_target(c, cursor_strip(ch.c[0]));
    CXCursor ref = clang_getCursorReferenced(b);
    int fi = clang_getCursorKind(b) == CXCursor_MemberRefExpr ? ir_find_field(c->m, ref) : -1;
    if (fi >= 0) {
      char *idx;
      render_to(c, ch.c[2], &idx);
      emit_field(c, ci->cur, fi, idx, out);
      free(idx);
      free(ch.c);
      return 1;
    }
    if (clang_getCursorKind(b) == CXCursor_DeclRefExpr) {
      for (k = 0; k < c->n_aliases; k++)
        if (clang_equalCursors(clang_getCanonicalCursor(ref), clang_getCanonicalCursor(c->aliases[k].var))) {
          char *idx, *be = ir_channel_base_expr(&c->m->channels[c->aliases[k].group]);
          render_to(c, ch.c[2], &idx);
          sb_printf(out, "nestcl_ring_peek(ring, n_channels, n, %s, %s + %s, nestcl_i)", c->aliases[k].slot, be, idx);
          free(idx);
          free(be);
          free(ch.c);
          return 1;
        }
    }
  }
  if (ch.n == 3 && (c->mode == RW_DYN || c->mode == RW_UPDATE)) {
    /* node.B_.interpolation_coefficients[ i ]: a gap-junction input, zero on the device */
    CXCursor b = cursor_strip(ch.c[0]);
    if (clang_getCursorKind(b) == CXCursor_MemberRefExpr && is_gap_input(c, clang_getCursorReferenced(b)) &&
        pure_expr(ch.c[2])) {
      char *mn = cursor_spelling(clang_getCursorReferenced(b));
      c->m->gap_junctions = 1;
      sb_printf(out, "0.0 /* B_.%s: gap-junction input, zero on the device */", mn);
      free(mn);
      free(ch.c);
      return 1;
    }
  }
  free(ch.c);
  error_at(c, ci->cur, "subscript operator", "only SoA fields and input buffer channels can be indexed");
  return 1;
}

/* vector<double>::size() and empty() of a per-receptor vector: the receptor count (A + B K for an ODE state). */
static int call_receptor_count(rw_ctx *c, const call_info *ci, strbuf *out)
{
  char *len = NULL;
  if (ci->nargs != 0 || clang_Cursor_isNull(ci->base) || !(name_is(ci, "size") || name_is(ci, "empty")) ||
      !is_per_receptor_container_len(c, ci->base, &len))
    return 0;
  if (name_is(ci, "size"))
    sb_puts(out, len);
  else
    sb_printf(out, "(%s == 0)", len);
  free(len);
  return 1;
}

/* Time::get_resolution().get_ms() */
static int call_resolution_ms(rw_ctx *c, const call_info *ci, strbuf *out)
{
  if (!name_is(ci, "get_ms") || clang_Cursor_isNull(ci->base) ||
      clang_Cursor_isNull(find_call_below(ci->base, "get_resolution")))
    return 0;
  if (c->mode == RW_UPDATE || c->mode == RW_PRERUN || c->mode == RW_INIT || c->mode == RW_RECORD)
    sb_puts(out, "resolution_ms");
  else
    error_at(c, ci->cur, "Time::get_resolution() in this helper",
             "only update(), pre_run_hook() and init_buffers_() know the resolution");
  return 1;
}

/* origin.get_steps() and Time(Time::ms(x)).get_steps() in update(); the latter and the resolution's steps in pre_run_hook(). */
static int call_get_steps(rw_ctx *c, const call_info *ci, strbuf *out)
{
  if (!name_is(ci, "get_steps") || clang_Cursor_isNull(ci->base))
    return 0;
  CXCursor b = cursor_strip(ci->base);
  if (clang_getCursorKind(b) == CXCursor_DeclRefExpr && c->mode == RW_UPDATE &&
      clang_getCursorKind(clang_getCursorReferenced(b)) == CXCursor_ParmDecl &&
      (clang_equalCursors(clang_getCanonicalCursor(clang_getCursorReferenced(b)),
                          clang_getCanonicalCursor(clang_Cursor_getArgument(c->fn, 0))) ||
       (c->helper && rw_is_time_type(clang_getCursorType(clang_getCursorReferenced(b)))))) {
    sb_puts(out, "origin_steps");
    return 1;
  }
  if (c->mode == RW_UPDATE) {
    /* pp_psc_delta's random dead time: Time( Time::ms( x ) ).get_steps() on the device */
    CXCursor ms = find_call_below(ci->base, "ms");
    if (!clang_Cursor_isNull(ms) && clang_Cursor_getNumArguments(ms) == 1) {
      sb_puts(out, "nestcl_time_ms_to_steps(");
      render_arg(c, ms, 0, out);
      sb_puts(out, ", resolution_ms)");
      return 1;
    }
  }
  if (c->mode == RW_PRERUN) {
    CXCursor ms = find_call_below(ci->base, "ms");
    if (!clang_Cursor_isNull(ms) && clang_Cursor_getNumArguments(ms) == 1) {
      sb_puts(out, "nestcl_ms_to_steps(");
      render_arg(c, ms, 0, out);
      sb_puts(out, ", resolution_ms)");
      return 1;
    }
    if (!clang_Cursor_isNull(find_call_below(ci->base, "get_resolution"))) {
      sb_puts(out, "1L");
      return 1;
    }
  }
  return 0;
}

/* Time::delay_ms_to_steps( d ) */
static int call_delay_ms_to_steps(rw_ctx *c, const call_info *ci, strbuf *out)
{
  if (strcmp(ci->qname, "Time::delay_ms_to_steps") || ci->nargs != 1)
    return 0;
  sb_puts(out, "nestcl_delay_ms_to_steps(");
  render_arg(c, ci->cur, 0, out);
  sb_puts(out, ", resolution_ms)");
  return 1;
}

/* The math table (mathtable.c): std:: and numerics:: functions, std::min/max, numeric_limits. */
static int call_math(rw_ctx *c, const call_info *ci, strbuf *out)
{
  int k;
  const math_entry *me = math_lookup(ci->qname, ci->nargs);
  if (!me)
    return 0;
  CXType rt = clang_getCursorType(ci->cur);
  char *rts;
  if (rt.kind == CXType_LValueReference || rt.kind == CXType_RValueReference)
    rt = clang_getPointeeType(rt);
  rt = clang_getCanonicalType(rt);
  rts = xstrdup(rt.kind == CXType_Double ? "double" : rt.kind == CXType_Long ? "long" : rt.kind == CXType_Int ? "int"
                : "other");
  const int portable = (c->mode == RW_UPDATE || c->mode == RW_SEND) && me->portable;
  if (me->transcendental && !portable)
    c->transcendental = 1;
  if (me->kind == MATH_CONST) {
    const char *v = math_limit(me->name, rts);
    if (v)
      sb_puts(out, v);
    else
      error_at(c, ci->cur, "this numeric_limits member", "no device constant for this type");
  } else if (me->kind == MATH_MINMAX) {
    const char *suffix = !strcmp(rts, "double") ? "d" : (!strcmp(rts, "long") || !strcmp(rts, "int")) ? "l" : NULL;
    if (!suffix) {
      error_at(c, ci->cur, "std::min/std::max on this type", "only double, long and int are mapped");
    } else {
      sb_printf(out, "nestcl_%s_%s(", me->name, suffix);
      render_arg(c, ci->cur, 0, out);
      sb_puts(out, ", ");
      render_arg(c, ci->cur, 1, out);
      sb_putc(out, ')');
    }
  } else {
    sb_printf(out, "%s(", portable ? me->portable : me->name);
    for (k = 0; k < ci->nargs; k++) {
      if (k)
        sb_puts(out, ", ");
      render_arg(c, ci->cur, k, out);
    }
    sb_putc(out, ')');
  }
  free(rts);
  return 1;
}

/* B_.x_.get_value( lag ): read and clear the ring slot. */
static int call_ring_get_value(rw_ctx *c, const call_info *ci, strbuf *out)
{
  char *chan = NULL;
  if (!name_is(ci, "get_value") || strcmp(ci->cls, "RingBuffer") || ci->nargs != 1 ||
      channel_of_base(c, ci->base, &chan) < 0)
    return 0;
  sb_printf(out, "nestcl_ring_take(ring, n_channels, n, nestcl_ring_slot(origin_steps, ");
  render_arg(c, ci->cur, 0, out);
  sb_printf(out, ", ring_slots), %s, nestcl_i)", chan);
  free(chan);
  return 1;
}

/* kernel().event_delivery_manager.get_modulo( lag ): the ring slot. */
static int call_ring_modulo(rw_ctx *c, const call_info *ci, strbuf *out)
{
  if (!name_is(ci, "get_modulo") || ci->nargs != 1)
    return 0;
  sb_puts(out, "nestcl_ring_slot(origin_steps, ");
  render_arg(c, ci->cur, 0, out);
  sb_puts(out, ", ring_slots)");
  return 1;
}

/* B_.buffer_.reset_values_all_channels( slot ) of a multi-channel input buffer. */
static int call_ring_reset(rw_ctx *c, const call_info *ci, strbuf *out)
{
  if (!name_is(ci, "reset_values_all_channels") || ci->nargs != 1 || clang_Cursor_isNull(ci->base) ||
      clang_getCursorKind(cursor_strip(ci->base)) != CXCursor_MemberRefExpr)
    return 0;
  int gi = ir_find_channel_group(c->m, clang_getCursorReferenced(cursor_strip(ci->base)));
  if (gi < 0)
    return 0;
  int cnt = 0, j;
  char *be = ir_channel_base_expr(&c->m->channels[gi]);
  for (j = gi; j < c->m->n_channels && !strcmp(c->m->channels[j].buffer, c->m->channels[gi].buffer); j++)
    cnt++;
  sb_puts(out, "nestcl_ring_zero_channels(ring, n_channels, n, ");
  render_arg(c, ci->cur, 0, out);
  sb_printf(out, ", %s, %d, nestcl_i)", be, cnt);
  free(be);
  return 1;
}

/*
 * Whether argument k of a call is written in the call (not a default argument,
 * whose expression lies in the callee's declaration).
 */
static int arg_written(CXCursor call, unsigned k)
{
  CXSourceRange cr = clang_getCursorExtent(call), ar = clang_getCursorExtent(clang_Cursor_getArgument(call, k));
  CXFile cf, af;
  unsigned cb, ce, ab, ae, dummy;
  if (clang_Range_isNull(ar))
    return 0;
  clang_getFileLocation(clang_getRangeStart(cr), &cf, &dummy, &dummy, &cb);
  clang_getFileLocation(clang_getRangeEnd(cr), NULL, &dummy, &dummy, &ce);
  clang_getFileLocation(clang_getRangeStart(ar), &af, &dummy, &dummy, &ab);
  clang_getFileLocation(clang_getRangeEnd(ar), NULL, &dummy, &dummy, &ae);
  return clang_File_isEqual(cf, af) && ab >= cb && ae <= ce && ae > ab;
}

typedef struct offset_calls {
  CXCursor *c;
  int n;
} offset_calls;

/* Every call of SpikeEvent::set_offset( x ) below a cursor. */
static enum CXChildVisitResult visit_offset_calls(CXCursor x, CXCursor parent, CXClientData data)
{
  offset_calls *oc = data;
  (void)parent;
  if (clang_getCursorKind(x) == CXCursor_CallExpr && clang_Cursor_getNumArguments(x) == 1) {
    char *n = cursor_spelling(clang_getCursorReferenced(x));
    if (!strcmp(n, "set_offset")) {
      oc->c = xrealloc(oc->c, sizeof *oc->c * (size_t)(oc->n + 1));
      oc->c[oc->n++] = x;
    }
    free(n);
  }
  return CXChildVisit_Recurse;
}

/* set_spiketime( Time::step( t ) ): NESTCL_SET_SPIKETIME, which keeps the last spike time where update() reads it */
static int call_set_spiketime(rw_ctx *c, const call_info *ci, strbuf *out)
{
  if (!name_is(ci, "set_spiketime") || ci->nargs < 1)
    return 0;
  CXCursor st = find_call_below(clang_Cursor_getArgument(ci->cur, 0), "step");
  if (clang_Cursor_isNull(st) || clang_Cursor_getNumArguments(st) != 1)
    return 0;
  if (ci->nargs >= 2 && arg_written(ci->cur, 1)) {
    /* ArchivingNode keeps t - offset as the last spike: NEST's glue passes the offset of the spike's event
     * (emit_<model>), so the two must be the same value: every set_offset() of this function sets it */
    char *off, *why = NULL;
    offset_calls oc;
    render_to(c, clang_Cursor_getArgument(ci->cur, 1), &off);
    oc.n = 0;
    oc.c = NULL;
    clang_visitChildren(c->fn, visit_offset_calls, &oc);
    if (!oc.n)
      why = xasprintf("no SpikeEvent of %s carries the offset, and NEST's glue gives the spike time the event's offset",
                      "this function");
    for (int k = 0; k < oc.n && !why; k++) {
      char *so;
      render_to(c, clang_Cursor_getArgument(oc.c[k], 0), &so);
      if (strcmp(so, off))
        why = xasprintf("the SpikeEvent's offset is '%s', and NEST's glue gives the spike time the event's offset", so);
      free(so);
    }
    free(oc.c);
    if (why) {
      error_at(c, ci->cur, "set_spiketime with an offset other than the spike's", why);
      free(why);
      free(off);
      return 1;
    }
    c->m->spiketime_offset = 1;
    sb_puts(out, "NESTCL_SET_SPIKETIME_OFFSET(nestcl_i, ");
    render_arg(c, st, 0, out);
    sb_printf(out, ", %s)", off);
    free(off);
    return 1;
  }
  sb_puts(out, "NESTCL_SET_SPIKETIME(nestcl_i, ");
  render_arg(c, st, 0, out);
  sb_putc(out, ')');
  return 1;
}

/*
 * NEST's SliceRingBuffer (B_.events_ of the *_ps models), nestcl/model.h
 * event_queue: the runtime stages the events of each update in the order
 * NEST's queue hands them out, so prepare_delivery() (which sorts them) has
 * nothing left to do; get_next_spike() takes the next one (nestcl_evq_next,
 * nestcl_ring.h) over the kernel's locals nestcl_evq_* (translate.c, insert_event_locals);
 * add_refractory() sets the pseudo-event. handle( SpikeEvent& )'s add_spike()
 * is NEST's own (the glue reads the node's queue); init_buffers_()'s resize()
 * and clear() are the runtime's set-up (rw_is_runtime_setup).
 */
static int call_slice_ring_buffer(rw_ctx *c, const call_info *ci, strbuf *out)
{
  if (strcmp(ci->cls, "SliceRingBuffer"))
    return 0;
  CXCursor b = clang_Cursor_isNull(ci->base) ? ci->base : cursor_strip(ci->base);
  if (!c->m->event_queue || clang_Cursor_isNull(b) || clang_getCursorKind(b) != CXCursor_MemberRefExpr ||
      !clang_equalCursors(clang_getCanonicalCursor(clang_getCursorReferenced(b)),
                          clang_getCanonicalCursor(c->m->evq_decl))) {
    error_at(c, ci->cur, "a SliceRingBuffer other than the model's Buffers_ member",
             "the runtime stages one queue of precise spikes per neuron");
    return 1;
  }
  if (name_is(ci, "prepare_delivery") && ci->nargs == 0) {
    sb_puts(out, "((void)0) /* prepare_delivery(): the runtime staged this update's events in NEST's order */");
    return 1;
  }
  if (c->helper) {
    char *what = xasprintf("call to 'SliceRingBuffer::%s' in a helper of update()", ci->name);
    error_at(c, ci->cur, what, "the queue's position lives in update()'s own body");
    free(what);
    return 1;
  }
  if (name_is(ci, "get_next_spike") && ci->nargs == 5) {
    sb_puts(out, "((nestcl_evq_r = nestcl_evq_next(evq_lag, evq_offset, evq_weight, &nestcl_evq_cur, nestcl_evq_end, "
                 "origin_steps, ");
    render_arg(c, ci->cur, 0, out);
    sb_puts(out, ", ");
    render_arg(c, ci->cur, 1, out);
    sb_puts(out, ", &nestcl_evq_rstamp, nestcl_evq_roff, &nestcl_evq_off, &nestcl_evq_w, &nestcl_evq_eor)) ? ((void)((");
    render_arg(c, ci->cur, 2, out);
    sb_puts(out, ") = nestcl_evq_off), (void)((");
    render_arg(c, ci->cur, 3, out);
    sb_puts(out, ") = nestcl_evq_w)) : (void)0, (");
    render_arg(c, ci->cur, 4, out);
    sb_puts(out, ") = nestcl_evq_eor != 0, nestcl_evq_r)");
    return 1;
  }
  if (name_is(ci, "add_refractory") && ci->nargs == 2) {
    sb_puts(out, "(nestcl_evq_rstamp = (");
    render_arg(c, ci->cur, 0, out);
    sb_puts(out, "), nestcl_evq_roff = (");
    render_arg(c, ci->cur, 1, out);
    sb_puts(out, "))");
    return 1;
  }
  {
    char *what = xasprintf("call to 'SliceRingBuffer::%s' in update()", ci->name);
    error_at(c, ci->cur, what, "update() takes its events with prepare_delivery(), get_next_spike() and "
                               "add_refractory() only");
    free(what);
  }
  return 1;
}

/* kernel().event_delivery_manager.send( *this, se, lag ): a spike into the spike list. */
static int call_send(rw_ctx *c, const call_info *ci, strbuf *out)
{
  if (!name_is(ci, "send") || strcmp(ci->cls, "EventDeliveryManager") || ci->nargs != 3)
    return 0;
  CXCursor ev = cursor_strip(clang_Cursor_getArgument(ci->cur, 1));
  char *evt = decl_name_of_type(clang_getCursorType(ev));
  int is_spike = !strcmp(evt, "SpikeEvent");
  free(evt);
  if (is_spike && (c->multiplicity || c->offsets)) {
    /* the event is a SpikeEvent local: its count nestcl_mult_<name>, its offset nestcl_off_<name> */
    if (clang_getCursorKind(ev) != CXCursor_DeclRefExpr) {
      error_at(c, ci->cur, "sending a SpikeEvent that is not a local",
               c->offsets ? "its offset is a local's" : "its multiplicity is a local's");
      return 1;
    }
    char *vn = cursor_spelling(clang_getCursorReferenced(ev));
    if (c->offsets) {
      sb_puts(out, "nestcl_emit_spikes_offset(spike_count, spikes, spike_offsets, spike_capacity, nestcl_i, ");
      render_arg(c, ci->cur, 2, out);
      if (c->multiplicity)
        sb_printf(out, ", nestcl_mult_%s, nestcl_off_%s)", vn, vn);
      else
        sb_printf(out, ", 1u, nestcl_off_%s)", vn);
    } else {
      sb_puts(out, "nestcl_emit_spikes(spike_count, spikes, spike_capacity, nestcl_i, ");
      render_arg(c, ci->cur, 2, out);
      sb_printf(out, ", nestcl_mult_%s)", vn);
    }
    free(vn);
  } else if (is_spike) {
    sb_puts(out, "nestcl_emit_spike(spike_count, spikes, spike_capacity, nestcl_i, ");
    render_arg(c, ci->cur, 2, out);
    sb_putc(out, ')');
  } else {
    error_at(c, ci->cur, "sending an event other than SpikeEvent", "only spikes are delivered from the device");
  }
  return 1;
}

/*
 * ClopathArchivingNode::write_clopath_history( t, u, u_bar_plus, u_bar_minus,
 * u_bar_bar ) and init_clopath_buffers(): the LTD/LTP history that only
 * clopath_synapse reads. The device keeps none; the model is marked so that
 * the NEST glue refuses a node with plastic connections onto it (the engine
 * has no clopath_synapse). Arguments that change something are refused.
 */
static int call_clopath_history(rw_ctx *c, const call_info *ci, strbuf *out)
{
  if (!(name_is(ci, "write_clopath_history") || name_is(ci, "init_clopath_buffers")) ||
      !strstr(ci->cls, "ClopathArchivingNode"))
    return 0;
  for (int k = 0; k < ci->nargs; k++) {
    int hit = 0;
    clang_visitChildren(clang_Cursor_getArgument(ci->cur, (unsigned)k), visit_side_effect, &hit);
    if (hit) {
      error_at(c, ci->cur, "write_clopath_history with an argument that changes state",
               "the device drops the call, so its arguments must not act");
      return 1;
    }
  }
  c->m->drops_clopath_history = 1;
  sb_printf(out, "((void)0) /* %s: Clopath history, read only by clopath_synapse (not on the device) */",
            name_is(ci, "init_clopath_buffers") ? "init_clopath_buffers" : "write_clopath_history");
  return 1;
}

/* se.set_multiplicity( n ) of a SpikeEvent local: its count, which send() emits as n spikes. */
static int call_set_multiplicity(rw_ctx *c, const call_info *ci, strbuf *out)
{
  if (!name_is(ci, "set_multiplicity") || ci->nargs != 1)
    return 0;
  CXCursor b = clang_Cursor_isNull(ci->base) ? ci->base : cursor_strip(ci->base);
  if (clang_Cursor_isNull(b) || clang_getCursorKind(b) != CXCursor_DeclRefExpr) {
    error_at(c, ci->cur, "set_multiplicity on something other than a SpikeEvent local",
             "the multiplicity is kept in a local beside the event");
    return 1;
  }
  char *vn = cursor_spelling(clang_getCursorReferenced(b));
  sb_printf(out, "(nestcl_mult_%s = (nestcl_u32)(", vn);
  render_arg(c, ci->cur, 0, out);
  sb_puts(out, "))");
  free(vn);
  return 1;
}

/* se.set_offset( x ) of a SpikeEvent local: its offset, which send() lists beside the spike. */
static int call_set_offset(rw_ctx *c, const call_info *ci, strbuf *out)
{
  if (!name_is(ci, "set_offset") || ci->nargs != 1)
    return 0;
  CXCursor b = clang_Cursor_isNull(ci->base) ? ci->base : cursor_strip(ci->base);
  char *tn = clang_Cursor_isNull(b) ? xstrdup("") : decl_name_of_type(clang_getCursorType(b));
  int local = !clang_Cursor_isNull(b) && clang_getCursorKind(b) == CXCursor_DeclRefExpr && !strcmp(tn, "SpikeEvent");
  free(tn);
  if (!local) {
    error_at(c, ci->cur, "set_offset on something other than a SpikeEvent local",
             "the offset is kept in a local beside the event");
    return 1;
  }
  char *vn = cursor_spelling(clang_getCursorReferenced(b));
  sb_printf(out, "(nestcl_off_%s = (double)(", vn);
  render_arg(c, ci->cur, 0, out);
  sb_puts(out, "))");
  free(vn);
  return 1;
}

/* ArchivingNode::get_spiketime_ms(): the last spike time, which NESTCL_SET_SPIKETIME writes. */
static int call_get_spiketime(rw_ctx *c, const call_info *ci, strbuf *out)
{
  if (!name_is(ci, "get_spiketime_ms") || strcmp(ci->cls, "ArchivingNode") || ci->nargs != 0)
    return 0;
  if (c->m->last_spike_field < 0) { /* parse.c adds the field for every call in update() */
    error_at(c, ci->cur, "get_spiketime_ms() here", "the last spike time is kept for update() only");
    return 1;
  }
  c->used[c->m->last_spike_field] = 1;
  sb_printf(out, "%s[nestcl_i]", c->m->fields[c->m->last_spike_field].c_name);
  return 1;
}

/*
 * A spike handler's e.get_offset(): the offset the routing function is given,
 * and a mark that this route read it (the runtime must then pass the spike's
 * own offset, or refuse the connection where it cannot).
 */
static int call_get_offset(rw_ctx *c, const call_info *ci, strbuf *out)
{
  if (!name_is(ci, "get_offset") || ci->nargs != 0)
    return 0;
  c->m->reads_offset = 1;
  sb_puts(out, "(*nestcl_offset_read = 1, offset)");
  return 1;
}

/* B_.logger_.record_data( step ) */
static int call_record_data(rw_ctx *c, const call_info *ci, strbuf *out)
{
  if (!name_is(ci, "record_data") || ci->nargs != 1)
    return 0;
  sb_puts(out, "NESTCL_RECORD(");
  render_arg(c, ci->cur, 0, out);
  sb_putc(out, ')');
  return 1;
}

/* rng->drand() or the generator's operator(): a counter-based stream per neuron, step and call site. */
static int call_random_draw(rw_ctx *c, const call_info *ci, strbuf *out)
{
  if (!(name_is(ci, "drand") || name_is(ci, "operator()")) || ci->nargs != 0 || !strstr(ci->cls, "RandomGenerator"))
    return 0;
  /* NEST's per-thread generator becomes a counter-based stream per neuron,
   * step and call site (nestcl_philox.h); its numbers differ from NEST's. */
  if (!c->lag_var || c->helper) {
    error_at(c, ci->cur, c->helper ? "a random draw in a helper of update()" : "a random draw outside the lag loop",
             c->helper ? "each call site of update() gets its own stream" : "draws are keyed by neuron and step");
    return 1;
  }
  warning_at(c, ci->cur, "random draw: the device uses its own counter-based stream (NESTCL_DRAND), "
                         "statistically but not bitwise equal to NEST's");
  sb_printf(out, "NESTCL_DRAND(nestcl_i, origin_steps + %s, %d)", c->lag_var, c->rng_sites++);
  return 1;
}

/* ---- NEST's random distributions (nestcl_dist.h) ---- */

/* The distribution a type names (RandomDistribution< std::X_distribution<> >, or its param_type), or NULL. */
static const char *dist_kind(CXType t)
{
  static const char *const kinds[][2] = {
    {"lognormal_distribution", "lognormal"}, {"normal_distribution", "normal"},   {"poisson_distribution", "poisson"},
    {"gamma_distribution", "gamma"},         {"exponential_distribution", "exponential"},
    {"binomial_distribution", "binomial"},   {"uniform_real_distribution", "uniform"}};
  if (t.kind == CXType_LValueReference || t.kind == CXType_RValueReference)
    t = clang_getPointeeType(t);
  CXString s = clang_getTypeSpelling(clang_getCanonicalType(t));
  const char *sp = clang_getCString(s), *r = NULL;
  for (size_t k = 0; k < sizeof kinds / sizeof *kinds && !r; k++)
    if (strstr(sp, kinds[k][0]))
      r = kinds[k][1];
  clang_disposeString(s);
  return r;
}

/* The parameters a distribution takes, with the C++ standard's defaults. */
static int dist_defaults(const char *kind, const char **a, const char **b)
{
  *a = "1.0";
  *b = "1.0";
  if (!strcmp(kind, "normal") || !strcmp(kind, "lognormal") || !strcmp(kind, "uniform"))
    *a = "0.0";
  if (!strcmp(kind, "binomial")) {
    *a = "1";
    *b = "0.5";
  }
  return !strcmp(kind, "poisson") || !strcmp(kind, "exponential") ? 1 : 2;
}

/* The constructor call that initialises a variable (its CallExpr child), or a null cursor. */
static CXCursor var_construct(CXCursor v)
{
  CXCursor r = clang_getNullCursor();
  cursor_kids k = cursor_children(v);
  for (int j = 0; j < k.n && clang_Cursor_isNull(r); j++) {
    CXCursor x = cursor_strip(k.c[j]);
    if (clang_getCursorKind(x) == CXCursor_CallExpr)
      r = x;
  }
  free(k.c);
  return r;
}

/*
 * dist( rng ) and dist( rng, param ) on a NEST RandomDistribution: a draw from
 * nestcl_dist.h on the stream of this call site, neuron and step. The
 * parameters come from param (a param_type local, whose values
 * nestcl_dp_<name>_<k> its declaration kept, or a temporary), else from
 * dist.param( p ) in pre_run_hook() (m->dists), else the standard's defaults.
 */
static int call_random_dist(rw_ctx *c, const call_info *ci, strbuf *out)
{
  if (!name_is(ci, "operator()") || strcmp(ci->cls, "RandomDistribution"))
    return 0;
  if (c->helper) {
    error_at(c, ci->cur, "a random draw in a helper of update()", "each call site of update() gets its own stream");
    return 1;
  }
  CXCursor obj = clang_getNullCursor(), par = clang_getNullCursor();
  const char *kind = NULL;
  for (int k = 0; k < ci->nargs; k++) {
    CXCursor a = cursor_strip(clang_Cursor_getArgument(ci->cur, (unsigned)k));
    char *tn = decl_name_of_type(clang_getCursorType(a));
    if (!strcmp(tn, "param_type"))
      par = a;
    else if (!strcmp(tn, "RandomDistribution") && (kind = dist_kind(clang_getCursorType(a))) != NULL)
      obj = a;
    free(tn);
  }
  if (clang_Cursor_isNull(obj) && !clang_Cursor_isNull(ci->base) &&
      (kind = dist_kind(clang_getCursorType(ci->base))) != NULL)
    obj = cursor_strip(ci->base);
  if (!kind) {
    error_at(c, ci->cur, "a draw from this distribution", "nestcl_dist.h has uniform_real, normal, lognormal, "
                                                          "exponential, gamma, poisson and binomial");
    return 1;
  }
  if (!c->lag_var) {
    error_at(c, ci->cur, "a random draw outside the lag loop", "draws are keyed by neuron and step");
    return 1;
  }
  const char *da, *db;
  const int np = dist_defaults(kind, &da, &db);
  char *args[2] = {xstrdup(da), xstrdup(db)};
  if (!clang_Cursor_isNull(par)) {
    if (clang_getCursorKind(par) == CXCursor_DeclRefExpr) {
      char *vn = cursor_spelling(clang_getCursorReferenced(par));
      CXCursor ctor = var_construct(clang_getCursorReferenced(par));
      int n = clang_Cursor_isNull(ctor) ? 0 : clang_Cursor_getNumArguments(ctor);
      for (int k = 0; k < n && k < np; k++) {
        char *t;
        render_to(c, clang_Cursor_getArgument(ctor, (unsigned)k), &t);
        if (*t) {
          free(args[k]);
          args[k] = xasprintf("nestcl_dp_%s_%d", vn, k);
        }
        free(t);
      }
      free(vn);
    } else {
      CXCursor ctor = clang_getCursorKind(par) == CXCursor_CallExpr ? par : clang_getNullCursor();
      int n = clang_Cursor_isNull(ctor) ? 0 : clang_Cursor_getNumArguments(ctor);
      for (int k = 0; k < n && k < np; k++) {
        char *t;
        render_to(c, clang_Cursor_getArgument(ctor, (unsigned)k), &t);
        if (*t) {
          free(args[k]);
          args[k] = t;
        } else {
          free(t);
        }
      }
    }
  } else if (clang_getCursorKind(obj) == CXCursor_MemberRefExpr) {
    CXCursor mem = clang_getCanonicalCursor(clang_getCursorReferenced(obj));
    for (int d = 0; d < c->m->n_dists; d++)
      if (clang_equalCursors(clang_getCanonicalCursor(c->m->dists[d].member), mem)) {
        for (int k = 0; k < c->m->dists[d].nargs && k < np; k++) {
          char *t;
          render_to(c, c->m->dists[d].args[k], &t);
          if (*t) { /* a default argument renders as nothing: the standard's default stays */
            free(args[k]);
            args[k] = t;
          } else {
            free(t);
          }
        }
      }
  }
  warning_at(c, ci->cur, "random draw: the device draws from nestcl_dist.h on its own counter-based stream, "
                         "in distribution but not draw for draw equal to NEST's");
  const int site = c->rng_sites++;
  sb_printf(out, "nestcl_draw_%s(NESTCL_MODEL_RNG_SEED, %du, NESTCL_NEURON_ID(nestcl_i), (nestcl_u64)(origin_steps + %s), "
                 "(%s)(%s)", kind, site, c->lag_var, !strcmp(kind, "binomial") ? "nestcl_u64" : "double", args[0]);
  if (np == 2)
    sb_printf(out, ", (double)(%s)", args[1]);
  sb_putc(out, ')');
  free(args[0]);
  free(args[1]);
  return 1;
}

/* dist.param( p ) in pre_run_hook(): the draws in update() read p's arguments (parse.c, ir_model.dists). */
static int call_dist_param(rw_ctx *c, const call_info *ci, strbuf *out)
{
  if (!name_is(ci, "param") || strcmp(ci->cls, "RandomDistribution") || ci->nargs != 1)
    return 0;
  CXCursor b = clang_Cursor_isNull(ci->base) ? ci->base : cursor_strip(ci->base);
  int have = 0;
  for (int d = 0; d < c->m->n_dists && !clang_Cursor_isNull(b); d++)
    if (clang_getCursorKind(b) == CXCursor_MemberRefExpr &&
        clang_equalCursors(clang_getCanonicalCursor(c->m->dists[d].member),
                           clang_getCanonicalCursor(clang_getCursorReferenced(b))))
      have = 1;
  if (!have) {
    error_at(c, ci->cur, "this distribution's parameters", "they must be a param_type of fields and constants");
    return 1;
  }
  sb_puts(out, "((void)0) /* the distribution's parameters: read by the draws in update() */");
  return 1;
}

/* spike_event_is_due( t ) (ignore_and_spike): the dynamic condition only. */
static int call_spike_event_is_due(rw_ctx *c, const call_info *ci, strbuf *out)
{
  if (!name_is(ci, "spike_event_is_due") || ci->nargs != 1)
    return 0;
  warning_at(c, ci->cur, "spike_event_is_due(): the device path implements the dynamic spike condition only "
                         "(neurons with ignore_and_spike must stay on the CPU)");
  sb_puts(out, "NESTCL_SPIKE_EVENT_IS_DUE(");
  render_arg(c, ci->cur, 0, out);
  sb_putc(out, ')');
  return 1;
}

/* A handler's B_.x_.add_value( slot, v ) (or ( slot, channel, v )): the channel and value it routes to. */
static int call_route_add_value(rw_ctx *c, const call_info *ci, strbuf *out)
{
  char *chan = NULL;
  if (!name_is(ci, "add_value") || (ci->nargs != 2 && ci->nargs != 3) || clang_Cursor_isNull(ci->base))
    return 0;
  CXCursor b = cursor_strip(ci->base);
  int gi = -1;
  if (ci->nargs == 2) {
    gi = channel_of_base(c, ci->base, &chan);
  } else if (clang_getCursorKind(b) == CXCursor_MemberRefExpr) {
    gi = ir_find_channel_group(c->m, clang_getCursorReferenced(b));
    if (gi >= 0 && c->m->channels[gi].kind == IR_BUF_MULTI) {
      char *ch, *be = ir_channel_base_expr(&c->m->channels[gi]);
      render_to(c, clang_Cursor_getArgument(ci->cur, 1), &ch);
      chan = xasprintf("%s + (%s)", be, ch);
      free(ch);
      free(be);
    } else {
      gi = -1;
    }
  }
  if (gi < 0)
    return 0;
  sb_printf(out, "return nestcl_route(channel, value, %s, ", chan);
  render_arg(c, ci->cur, ci->nargs - 1, out);
  sb_putc(out, ')');
  free(chan);
  return 1;
}

/* A handler's event getters: what the routing function is given. */
static int call_event_getter(rw_ctx *c, const call_info *ci, strbuf *out)
{
  static const struct {
    const char *name, *text;
    unsigned modes;
  } getters[] = {
    {"get_weight", "weight", RW_ROUTES},
    {"get_multiplicity", "1", RW_ROUTES},
    {"get_rport", "rport", RW_ROUTES},
    {"get_current", "current", RW_BIT(RW_ROUTE_CURRENT)},
    {"get_delay_steps", "1", RW_ROUTES},
    {"get_rel_delivery_steps", "0", RW_ROUTES},
    {"get_modulo", "0", RW_ROUTES},
  };
  for (size_t k = 0; k < sizeof getters / sizeof *getters; k++)
    if (name_is(ci, getters[k].name) && (getters[k].modes & RW_BIT(c->mode))) {
      sb_puts(out, getters[k].text);
      return 1;
    }
  return 0;
}

/* The logger's init() and resizing per-receptor vectors: the runtime sizes storage (K), the logger is NEST's. */
static int call_host_storage(rw_ctx *c, const call_info *ci, strbuf *out)
{
  if (!((name_is(ci, "init") && strstr(ci->cls, "UniversalDataLogger")) ||
        ((name_is(ci, "resize") || name_is(ci, "clear") || name_is(ci, "assign")) && !clang_Cursor_isNull(ci->base) &&
         is_per_receptor_container(c, ci->base))))
    return 0;
  sb_puts(out, "((void)0)");
  return 1;
}

/* The type suffix of a nestcl_set_* helper for a value of type t, or NULL. */
static const char *set_suffix(CXType t)
{
  return t.kind == CXType_Double ? "d" : t.kind == CXType_Long ? "l" : t.kind == CXType_Int ? "i"
         : t.kind == CXType_Bool ? "b" : t.kind == CXType_UInt ? "u" : NULL;
}

/* update_value_param( d, names::x, x_, node ) (and the older updateValue): one key of SetStatus. */
static int call_update_value_param(rw_ctx *c, const call_info *ci, strbuf *out)
{
  if (!(name_is(ci, "update_value_param") || name_is(ci, "updateValue")) || ci->nargs < 3)
    return 0;
  CXCursor key = clang_getCursorReferenced(cursor_strip(clang_Cursor_getArgument(ci->cur, 1)));
  char *q = cursor_qualified_name(key);
  CXType lt = clang_getCanonicalType(clang_getCursorType(clang_Cursor_getArgument(ci->cur, 2)));
  const char *suffix = set_suffix(lt);
  if (!strncmp(q, "names::", 7) && !suffix &&
      clang_getCursorKind(cursor_strip(clang_Cursor_getArgument(ci->cur, 2))) == CXCursor_MemberRefExpr &&
      ir_find_field(c->m, clang_getCursorReferenced(cursor_strip(clang_Cursor_getArgument(ci->cur, 2)))) >= 0) {
    /* A per-receptor vector cannot take one double: it is set through NEST and the glue. */
    sb_printf(out, "nestcl_set_vector(\"%s\")", q + 7);
    free(q);
    return 1;
  }
  if (!strncmp(q, "names::", 7) && suffix) {
    /* a bool field is an int32 copy; a bool local of the model's own (ht_neuron's equilibrate) is a C bool */
    CXCursor arg = cursor_strip(clang_Cursor_getArgument(ci->cur, 2));
    if (!strcmp(suffix, "b") && !(clang_getCursorKind(arg) == CXCursor_MemberRefExpr &&
                                  ir_find_field(c->m, clang_getCursorReferenced(arg)) >= 0))
      suffix = "bool";
    sb_printf(out, "nestcl_set_%s(name, \"%s\", value, &(", suffix, q + 7);
    render_arg(c, ci->cur, 2, out);
    sb_puts(out, "), &nestcl_hit)");
    free(q);
    return 1;
  }
  free(q);
  return 0;
}

/* d.update_value( names::x, S_.x_ ): one key of SetStatus into a field. */
static int call_update_value(rw_ctx *c, const call_info *ci, strbuf *out)
{
  if (!name_is(ci, "update_value") || ci->nargs != 2)
    return 0;
  CXCursor key = clang_getCursorReferenced(cursor_strip(clang_Cursor_getArgument(ci->cur, 0)));
  CXCursor lv = cursor_strip(clang_Cursor_getArgument(ci->cur, 1));
  char *q = cursor_qualified_name(key);
  CXType lt = clang_getCanonicalType(clang_getCursorType(lv));
  int fi = clang_getCursorKind(lv) == CXCursor_MemberRefExpr ? ir_find_field(c->m, clang_getCursorReferenced(lv)) : -1;
  if (!strncmp(q, "names::", 7) && fi >= 0) {
    if (c->m->fields[fi].array_len != 0) {
      sb_printf(out, "nestcl_set_vector(\"%s\")", q + 7);
    } else {
      const char *suffix = set_suffix(lt);
      sb_printf(out, "nestcl_set_%s(name, \"%s\", value, &(%s), &nestcl_hit)", suffix ? suffix : "d", q + 7,
                c->m->fields[fi].c_name);
    }
    free(q);
    return 1;
  }
  free(q);
  return 0;
}

/* A model's own one-line getter is inlined. */
static int call_model_getter(rw_ctx *c, const call_info *ci, strbuf *out)
{
  return ci->ck == CXCursor_CXXMethod && is_model_scope(c, clang_getCursorSemanticParent(ci->callee)) &&
         !clang_CXXMethod_isVirtual(ci->callee) && inline_method(c, ci->cur, ci->callee, out);
}

/*
 * The lag at a call site of a helper: update()'s loop variable inside the lag
 * loop, from before it (emit_instant_spike_( origin, from, ... ) of the *_ps
 * models), a helper's own nestcl_lag inside a helper. It numbers a failure's
 * step.
 */
static const char *call_lag(rw_ctx *c, CXCursor call)
{
  if (c->helper)
    return "nestcl_lag";
  if (c->lag_var && !clang_Cursor_isNull(c->lag_loop)) {
    CXFile lf, cf;
    unsigned lb, le, cb, ce;
    if (!cursor_offsets(c->lag_loop, &lf, &lb, &le) && !cursor_offsets(call, &cf, &cb, &ce) &&
        clang_File_isEqual(lf, cf) && cb >= lb && ce <= le)
      return c->lag_var;
  }
  return "from";
}

/* A helper's generated name: nestcl_h_<model>_<method>. */
void rw_helper_name(const ir_model *m, CXCursor method, strbuf *out)
{
  char *n = cursor_spelling(method);
  sb_printf(out, "nestcl_h_%s_%s", m->name, n);
  free(n);
}

/* The helper's index in m->helpers, added if new. */
static void add_neuron_helper(ir_model *m, CXCursor def)
{
  int j;
  for (j = 0; j < m->n_helpers; j++)
    if (clang_equalCursors(clang_getCanonicalCursor(m->helpers[j]), clang_getCanonicalCursor(def)))
      return;
  m->helpers = xrealloc(m->helpers, sizeof *m->helpers * (size_t)(m->n_helpers + 1));
  m->helpers[m->n_helpers++] = def;
}

/*
 * A method of the model that update() (or a helper) calls, other than a getter
 * inline_method() could make an expression (emit_spike_, propagate_,
 * threshold_distance of the *_ps models): a function of its own over the same
 * fields (NESTCL_SELF_PARAMS, translate.c), called with the neuron, the lag of
 * the call and its own arguments. Its Time parameters are update()'s origin
 * (origin_steps): an argument for one must be update()'s origin or a helper's
 * Time parameter. Arguments by non-const reference are refused.
 */
static int call_neuron_helper(rw_ctx *c, const call_info *ci, strbuf *out)
{
  int k;
  if (ci->ck != CXCursor_CXXMethod || !is_model_scope(c, clang_getCursorSemanticParent(ci->callee)) ||
      clang_CXXMethod_isVirtual(ci->callee) || clang_CXXMethod_isStatic(ci->callee))
    return 0;
  CXCursor def = clang_getCursorDefinition(ci->callee);
  if (clang_Cursor_isNull(def) || clang_Cursor_isNull(rw_body_of(def))) {
    char *what = xasprintf("call to '%s'", ci->qname);
    error_at(c, ci->cur, what, "its definition is not in the model's files");
    free(what);
    return 1;
  }
  if (clang_Cursor_getNumArguments(def) != ci->nargs) {
    char *what = xasprintf("call to '%s' with default arguments", ci->qname);
    error_at(c, ci->cur, what, "a helper is called with all its arguments");
    free(what);
    return 1;
  }
  for (k = 0; k < ci->nargs; k++) {
    CXCursor parm = clang_Cursor_getArgument(def, (unsigned)k);
    CXType pt = clang_getCursorType(parm);
    char *pn = cursor_spelling(parm);
    const char *why = NULL;
    if (rw_is_time_type(pt)) {
      CXCursor a = cursor_strip(clang_Cursor_getArgument(ci->cur, (unsigned)k));
      CXCursor r = clang_getCursorReferenced(a);
      if (clang_getCursorKind(a) != CXCursor_DeclRefExpr || clang_getCursorKind(r) != CXCursor_ParmDecl ||
          !(c->helper ? rw_is_time_type(clang_getCursorType(r)) != 0
                      : clang_equalCursors(clang_getCanonicalCursor(r),
                                           clang_getCanonicalCursor(clang_Cursor_getArgument(c->fn, 0))) != 0))
        why = "a Time argument must be update()'s origin";
    } else if (pt.kind == CXType_LValueReference && !clang_isConstQualifiedType(clang_getPointeeType(pt))) {
      why = "an argument by non-const reference";
    } else if (is_reserved_name(pn) || !strncmp(pn, "nestcl_", 7)) {
      why = "a parameter named like the generated code's own";
    }
    free(pn);
    if (why) {
      char *what = xasprintf("call to '%s'", ci->qname);
      error_at(c, ci->cur, what, why);
      free(what);
      return 1;
    }
  }
  add_neuron_helper(c->m, def);
  rw_helper_name(c->m, def, out);
  sb_printf(out, "(NESTCL_SELF_ARGS, %s", call_lag(c, ci->cur));
  for (k = 0; k < ci->nargs; k++) {
    if (rw_is_time_type(clang_getCursorType(clang_Cursor_getArgument(def, (unsigned)k))))
      continue;
    sb_puts(out, ", ");
    render_arg(c, ci->cur, k, out);
  }
  sb_putc(out, ')');
  return 1;
}

/*
 * NEST's regula_falsi( *this, dt ) (libnestutil/regula_falsi.h): the root of
 * the model's threshold_distance() in [0, dt]. The translator writes its own
 * function with the same operations (translate.c, emit_regula_falsi) over the
 * model's threshold_distance(), a helper; NEST's NumericalInstability becomes
 * the model's failure.
 */
static int call_regula_falsi(rw_ctx *c, const call_info *ci, strbuf *out)
{
  if (!name_is(ci, "regula_falsi") || ci->nargs != 2 || ci->ck != CXCursor_FunctionDecl)
    return 0;
  CXCursor a0 = cursor_strip(clang_Cursor_getArgument(ci->cur, 0));
  cursor_kids k = cursor_children(a0);
  int is_this = clang_getCursorKind(a0) == CXCursor_UnaryOperator && k.n == 1 &&
                clang_getCursorKind(cursor_strip(k.c[0])) == CXCursor_CXXThisExpr;
  free(k.c);
  CXCursor def = clang_getNullCursor();
  if (is_this && !clang_Cursor_isNull(c->m->cls)) {
    cursor_kids mk = cursor_children(c->m->cls);
    for (int j = 0; j < mk.n; j++) {
      char *n = cursor_spelling(mk.c[j]);
      if (clang_getCursorKind(mk.c[j]) == CXCursor_CXXMethod && !strcmp(n, "threshold_distance"))
        def = clang_getCursorDefinition(mk.c[j]);
      free(n);
    }
    free(mk.c);
  }
  if (!is_this || clang_Cursor_isNull(def) || clang_Cursor_getNumArguments(def) != 1 ||
      clang_Cursor_isNull(rw_body_of(def))) {
    error_at(c, ci->cur, "regula_falsi other than on the model's own threshold_distance( t )",
             "the device's root finder calls the model's threshold_distance()");
    return 1;
  }
  add_neuron_helper(c->m, def);
  c->m->regula_falsi = def;
  ir_add_failure(c->m, "NumericalInstability");
  sb_printf(out, "nestcl_h_%s_regula_falsi(NESTCL_SELF_ARGS, %s, ", c->m->name, call_lag(c, ci->cur));
  render_arg(c, ci->cur, 1, out);
  sb_putc(out, ')');
  return 1;
}

/*
 * IAFPropagatorExp / IAFPropagatorAlpha (libnestutil/iaf_propagator.h), members
 * of the *_ps models that pre_run_hook() constructs from (tau_syn, tau_m, c_m):
 * evaluate( h ) is nestcl_iaf_propagator_exp / _alpha (nestcl_libm.h), the same
 * operations over the constructor's arguments, read where evaluate() is called
 * (parameters update() never writes). The Alpha's pair is assigned through
 * std::tie( a, b ) = propagator.evaluate( h ) into two locals.
 */
typedef struct prop_find {
  CXCursor member;  /* the propagator member */
  CXCursor ctor;    /* its constructor call in pre_run_hook() */
  int n_ctors;
} prop_find;

static enum CXChildVisitResult visit_prop_assign(CXCursor x, CXCursor parent, CXClientData data)
{
  prop_find *pf = data;
  (void)parent;
  if (clang_getCursorKind(x) == CXCursor_CallExpr) {
    char *n = cursor_spelling(clang_getCursorReferenced(x));
    if (!strcmp(n, "operator=")) {
      cursor_kids k = cursor_children(x);
      if (k.n >= 2) {
        CXCursor lhs = cursor_strip(k.c[0]);
        if (clang_getCursorKind(lhs) == CXCursor_MemberRefExpr &&
            clang_equalCursors(clang_getCanonicalCursor(clang_getCursorReferenced(lhs)),
                               clang_getCanonicalCursor(pf->member))) {
          CXCursor ctor = find_call_below(k.c[k.n - 1], "IAFPropagatorExp");
          if (clang_Cursor_isNull(ctor))
            ctor = find_call_below(k.c[k.n - 1], "IAFPropagatorAlpha");
          if (!clang_Cursor_isNull(ctor) && clang_Cursor_getNumArguments(ctor) == 3) {
            pf->ctor = ctor;
            pf->n_ctors++;
          } else {
            pf->n_ctors += 2; /* assigned otherwise: refused */
          }
        }
      }
      free(k.c);
    }
    free(n);
  }
  return CXChildVisit_Recurse;
}

typedef struct param_only {
  rw_ctx *c;
  int ok;
} param_only;

static enum CXChildVisitResult visit_param_only(CXCursor x, CXCursor parent, CXClientData data)
{
  param_only *po = data;
  (void)parent;
  enum CXCursorKind k = clang_getCursorKind(x);
  if (k == CXCursor_MemberRefExpr) {
    int fi = ir_find_field(po->c->m, clang_getCursorReferenced(x));
    if (fi < 0 || po->c->m->fields[fi].role != IR_ROLE_PARAMETER || po->c->m->fields[fi].written_in_update)
      po->ok = 0;
    return CXChildVisit_Continue;
  }
  if (k == CXCursor_DeclRefExpr || k == CXCursor_CallExpr)
    po->ok = 0;
  return po->ok ? CXChildVisit_Recurse : CXChildVisit_Break;
}

/* Whether e reads nothing but parameters that update() never writes (and constants). */
static int args_are_parameters(rw_ctx *c, CXCursor e)
{
  param_only po;
  po.c = c;
  po.ok = 1;
  if (visit_param_only(e, clang_getNullCursor(), &po) == CXChildVisit_Recurse)
    clang_visitChildren(e, visit_param_only, &po);
  return po.ok;
}

/* The propagator a call's object names, with its constructor's arguments in args; 0 with why set when not. */
static int propagator_of(rw_ctx *c, CXCursor base, CXCursor args[3], const char **why)
{
  CXCursor b = clang_Cursor_isNull(base) ? base : cursor_strip(base);
  prop_find pf;
  *why = "the propagator is not a member of the model";
  if (clang_Cursor_isNull(b) || clang_getCursorKind(b) != CXCursor_MemberRefExpr)
    return 0;
  pf.member = clang_getCursorReferenced(b);
  pf.ctor = clang_getNullCursor();
  pf.n_ctors = 0;
  if (!is_model_scope(c, clang_getCursorSemanticParent(pf.member)))
    return 0;
  if (c->m->has_method[IR_M_PRE_RUN])
    clang_visitChildren(c->m->methods[IR_M_PRE_RUN], visit_prop_assign, &pf);
  if (pf.n_ctors != 1) {
    *why = "pre_run_hook() must construct it once from (tau_syn, tau_m, c_m)";
    return 0;
  }
  for (int k = 0; k < 3; k++) {
    CXCursor a = clang_Cursor_getArgument(pf.ctor, (unsigned)k);
    /* parameters only: their values on the device are the ones pre_run_hook() read */
    if (!pure_expr(a) || !args_are_parameters(c, a)) {
      *why = "its constructor's arguments must be parameters update() never writes";
      return 0;
    }
    args[k] = a;
  }
  return 1;
}

static int call_propagator(rw_ctx *c, const call_info *ci, strbuf *out)
{
  int alpha = !strcmp(ci->cls, "IAFPropagatorAlpha");
  if (!name_is(ci, "evaluate") || ci->nargs != 1 || (!alpha && strcmp(ci->cls, "IAFPropagatorExp")))
    return 0;
  CXCursor args[3];
  const char *why;
  if (!propagator_of(c, ci->base, args, &why)) {
    error_at(c, ci->cur, alpha ? "IAFPropagatorAlpha::evaluate" : "IAFPropagatorExp::evaluate", why);
    return 1;
  }
  if (alpha) {
    error_at(c, ci->cur, "IAFPropagatorAlpha::evaluate other than in std::tie( a, b ) = ...evaluate( h )",
             "its pair goes into two locals");
    return 1;
  }
  sb_puts(out, "nestcl_iaf_propagator_exp(");
  for (int k = 0; k < 3; k++) {
    rw_render(c, args[k], out);
    sb_puts(out, ", ");
  }
  render_arg(c, ci->cur, 0, out);
  sb_puts(out, ", NESTCL_LIBM_VARIANT)");
  return 1;
}

/* std::tie( a, b ) = propagator_.evaluate( h ) of an IAFPropagatorAlpha: both locals at once. */
static int call_tie_propagator(rw_ctx *c, const call_info *ci, strbuf *out)
{
  if (!name_is(ci, "operator="))
    return 0;
  cursor_kids k = cursor_children(ci->cur);
  CXCursor tie = k.n >= 2 ? find_call_below(k.c[0], "tie") : clang_getNullCursor();
  CXCursor ev = k.n >= 2 ? find_call_below(k.c[k.n - 1], "evaluate") : clang_getNullCursor();
  free(k.c);
  if (clang_Cursor_isNull(tie) || clang_Cursor_isNull(ev))
    return 0;
  CXCursor args[3];
  const char *why = NULL;
  CXCursor eb = member_base(ev);
  char *cls = cursor_spelling(clang_getCursorSemanticParent(clang_getCursorReferenced(ev)));
  if (strcmp(cls, "IAFPropagatorAlpha") || clang_Cursor_getNumArguments(ev) != 1)
    why = "only IAFPropagatorAlpha's pair is taken apart on the device";
  free(cls);
  if (!why && clang_Cursor_getNumArguments(tie) != 2)
    why = "std::tie of two locals";
  for (int j = 0; !why && j < 2; j++) {
    CXCursor a = cursor_strip(clang_Cursor_getArgument(tie, (unsigned)j));
    CXCursor r = clang_getCursorReferenced(a);
    if (clang_getCursorKind(a) != CXCursor_DeclRefExpr || clang_getCursorKind(r) != CXCursor_VarDecl ||
        !is_local_decl(r) || clang_getCanonicalType(clang_getCursorType(r)).kind != CXType_Double)
      why = "std::tie of two double locals";
  }
  if (!why)
    propagator_of(c, eb, args, &why) ? (void)(why = NULL) : (void)0;
  if (why) {
    error_at(c, ci->cur, "std::tie( ... ) = propagator.evaluate( h )", why);
    return 1;
  }
  sb_puts(out, "nestcl_iaf_propagator_alpha(");
  for (int j = 0; j < 3; j++) {
    rw_render(c, args[j], out);
    sb_puts(out, ", ");
  }
  render_arg(c, ev, 0, out);
  for (int j = 0; j < 2; j++) {
    sb_puts(out, ", &");
    render_arg(c, tie, j, out);
  }
  sb_puts(out, ", NESTCL_LIBM_VARIANT)");
  return 1;
}

static int call_virtual(rw_ctx *c, const call_info *ci, strbuf *out)
{
  (void)out;
  if (ci->ck != CXCursor_CXXMethod || !clang_CXXMethod_isVirtual(ci->callee))
    return 0;
  char *what = xasprintf("virtual call to '%s'", ci->qname);
  error_at(c, ci->cur, what, "virtual dispatch");
  free(what);
  return 1;
}

static int call_unknown(rw_ctx *c, const call_info *ci, strbuf *out)
{
  (void)out;
  char *what = xasprintf("call to '%s'", *ci->qname ? ci->qname : ci->name);
  error_at(c, ci->cur, what, "not in the built-in table");
  free(what);
  return 1;
}

/* ---- calls in a synapse's send(): one rule per construct ---- */

/* Whether a type (through references) is NEST's history iterator, std::deque< histentry >::iterator. */
static int is_history_iterator(CXType t)
{
  CXString s;
  int r;
  if (t.kind == CXType_LValueReference || t.kind == CXType_RValueReference)
    t = clang_getPointeeType(t);
  s = clang_getTypeSpelling(clang_getCanonicalType(t));
  r = strstr(clang_getCString(s), "histentry") != NULL && strstr(clang_getCString(s), "iterator") != NULL;
  clang_disposeString(s);
  return r;
}

/* A variable (local or parameter) that cur refers to, searched below cur (cur included), or a null cursor. */
static CXCursor referenced_var(CXCursor cur)
{
  cursor_kids stack;
  CXCursor found = clang_getNullCursor();
  stack.c = xcalloc(1, sizeof *stack.c);
  stack.c[0] = cur;
  stack.n = 1;
  while (stack.n && clang_Cursor_isNull(found)) {
    CXCursor x = stack.c[--stack.n];
    if (clang_getCursorKind(x) == CXCursor_DeclRefExpr) {
      CXCursor r = clang_getCursorReferenced(x);
      if (clang_getCursorKind(r) == CXCursor_VarDecl || clang_getCursorKind(r) == CXCursor_ParmDecl)
        found = r;
    } else {
      cursor_append_children(&stack, x);
    }
  }
  free(stack.c);
  return found;
}

/* Whether a call's object is the synapse's target: the local holding get_target( t ), or that call. */
static int base_is_target(rw_ctx *c, CXCursor base)
{
  CXCursor b = cursor_strip(base);
  if (clang_Cursor_isNull(b))
    return 0;
  if (!clang_Cursor_isNull(find_call_below(b, "get_target")))
    return 1; /* get_target( t ), *get_target( t ) */
  CXCursor v = referenced_var(b);
  return !clang_Cursor_isNull(v) && !clang_Cursor_isNull(c->target_var) &&
         clang_equalCursors(clang_getCanonicalCursor(v), clang_getCanonicalCursor(c->target_var));
}

/* e.get_stamp().get_ms(): the presynaptic spike's time stamp. */
static int call_spike_time(rw_ctx *c, const call_info *ci, strbuf *out)
{
  (void)c;
  CXCursor b = cursor_strip(ci->base);
  if (!name_is(ci, "get_ms") || clang_Cursor_isNull(b) || clang_getCursorKind(b) != CXCursor_CallExpr ||
      !callee_named(b, "get_stamp"))
    return 0;
  sb_puts(out, "nestcl_env->t_spike");
  return 1;
}

/* What the synapse's base class and the connection manager give send(). */
static int call_connection_base(rw_ctx *c, const call_info *ci, strbuf *out)
{
  static const struct {
    const char *name, *text;
    int of_manager; /* kernel().connection_manager's, else the synapse's own */
  } base[] = {
    {"get_delay", "nestcl_env->delay_ms", 0},
    {"get_delay_steps", "nestcl_env->delay_steps", 0},
    {"get_rport", "nestcl_env->rport", 0},
    {"get_stdp_eps", "nestcl_env->eps", 1},
  };
  (void)c;
  if (ci->nargs != 0)
    return 0;
  /* the synapse's own (this, implicit or written) or the connection manager's; an event's getters are not these */
  CXCursor b = cursor_strip(ci->base);
  const int own = clang_Cursor_isNull(b) || clang_getCursorKind(b) == CXCursor_CXXThisExpr ||
                  clang_getCursorKind(b) == CXCursor_OverloadedDeclRef; /* through ConnectionBase in a template */
  for (size_t k = 0; k < sizeof base / sizeof *base; k++)
    if (name_is(ci, base[k].name) && (base[k].of_manager ? !strcmp(ci->cls, "ConnectionManager") : own)) {
      sb_puts(out, base[k].text);
      return 1;
    }
  return 0;
}

/* target->get_history( t1, t2, &start, &finish ) and target->get_K_value( t ): the device's spike history. */
static int call_target_history(rw_ctx *c, const call_info *ci, strbuf *out)
{
  int k;
  if (!((name_is(ci, "get_history") && ci->nargs == 4) || (name_is(ci, "get_K_value") && ci->nargs == 1)))
    return 0;
  if (!base_is_target(c, ci->base)) {
    error_at(c, ci->cur, "a spike history other than the target's", "only the synapse's target is on the device");
    return 1;
  }
  c->m->uses_history = 1;
  if (ci->nargs == 4) {
    sb_puts(out, "nestcl_hist_get_history(nestcl_env->hist, nestcl_env->target, ");
    for (k = 0; k < 4; k++) {
      if (k)
        sb_puts(out, ", ");
      render_arg(c, ci->cur, k, out);
      if (k == 1)
        sb_puts(out, ", nestcl_env->eps");
    }
    sb_putc(out, ')');
  } else {
    sb_puts(out, "nestcl_hist_get_K_value(nestcl_env->hist, nestcl_env->target, ");
    render_arg(c, ci->cur, 0, out);
    sb_puts(out, ", nestcl_env->tau_minus_inv, nestcl_env->eps, nestcl_env->fused)");
  }
  return 1;
}

/* The event's setters and e(): the weight the spike carries to the target's ring. */
static int call_event_send(rw_ctx *c, const call_info *ci, strbuf *out)
{
  const int on_event = strstr(ci->cls, "Event") != NULL;
  if (!on_event)
    return 0;
  if (name_is(ci, "operator()") && ci->nargs <= 1) {
    sb_puts(out, "(nestcl_emitted = 1)");
    return 1;
  }
  if (name_is(ci, "set_weight") && ci->nargs == 1) {
    sb_puts(out, "(*nestcl_w = (");
    render_arg(c, ci->cur, 0, out);
    sb_puts(out, "))");
    return 1;
  }
  if (name_is(ci, "set_receiver") && ci->nargs == 1) {
    CXCursor a = cursor_strip(clang_Cursor_getArgument(ci->cur, 0));
    if (!base_is_target(c, a))
      error_at(c, ci->cur, "a receiver other than the synapse's target", "the device delivers to the target only");
    else
      sb_puts(out, "((void)0) /* the receiver is the synapse's target */");
    return 1;
  }
  if ((name_is(ci, "set_delay_steps") || name_is(ci, "set_rport")) && ci->nargs == 1) {
    CXCursor a = cursor_strip(clang_Cursor_getArgument(ci->cur, 0));
    const char *own = name_is(ci, "set_rport") ? "get_rport" : "get_delay_steps";
    if (clang_getCursorKind(a) != CXCursor_CallExpr || !callee_named(a, own)) {
      char *what = xasprintf("%s() with a value other than the synapse's %s()", ci->name, own);
      error_at(c, ci->cur, what, "the device delivers with the synapse's own delay and rport");
      free(what);
    } else {
      sb_printf(out, "((void)0) /* %s: the synapse's own */", ci->name);
    }
    return 1;
  }
  if (name_is(ci, "get_multiplicity") && ci->nargs == 0) {
    sb_puts(out, "nestcl_env->multiplicity");
    return 1;
  }
  return 0;
}

/* start != finish, ++start, start++ on history iterators: the iterators are entry positions. */
static int call_history_iterator(rw_ctx *c, const call_info *ci, strbuf *out)
{
  int k;
  if (!(name_is(ci, "operator!=") || name_is(ci, "operator==") || name_is(ci, "operator++") ||
        name_is(ci, "operator--")))
    return 0;
  if (ci->nargs < 1 || !is_history_iterator(clang_getCursorType(clang_Cursor_getArgument(ci->cur, 0))))
    return 0;
  for (k = 0; k < ci->nargs; k++) {
    CXCursor a = cursor_strip(clang_Cursor_getArgument(ci->cur, (unsigned)k));
    enum CXCursorKind ak = clang_getCursorKind(a);
    if (ak != CXCursor_DeclRefExpr && ak != CXCursor_IntegerLiteral) {
      error_at(c, ci->cur, "this iterator expression", "history iterators are only compared and stepped");
      return 1;
    }
  }
  CXFile f;
  unsigned b, e;
  size_t size;
  const char *t;
  if (cursor_offsets(ci->cur, &f, &b, &e) || !(t = file_text(c, f, &size)) || e > size)
    return 0;
  sb_putn(out, t + b, e - b); /* the same text on positions */
  return 1;
}

/*
 * numerics::expm1( x ): NEST's header sums its own series unless HAVE_EXPM1
 * (never defined by NEST 3.10's CMake; nestcl_libm.h, nestcl_nest_expm1).
 * Which branch this build took is read off the definition the translator
 * sees: one that calls a C library expm1 is glibc's, one without is the
 * series. All modes: host helpers (pre_run_hook) call it as update() does.
 */
static int call_nest_expm1(rw_ctx *c, const call_info *ci, strbuf *out)
{
  if (strcmp(ci->qname, "numerics::expm1") || ci->nargs != 1)
    return 0;
  CXCursor def = clang_getCursorDefinition(ci->callee);
  if (clang_Cursor_isNull(def)) {
    error_at(c, ci->cur, "numerics::expm1 without a visible definition",
             "whether it is NEST's series or the C library's expm1 decides the result's last bits");
    return 1;
  }
  const int host = c->mode != RW_SEND && c->mode != RW_DYN && c->mode != RW_UPDATE;
  if (calls_method(def, "expm1")) {
    if (host) /* the C library's, as the host has it */
      return 0;
    sb_puts(out, "nestcl_glibc_expm1(");
  } else {
    sb_puts(out, "nestcl_nest_expm1(");
  }
  render_arg(c, ci->cur, 0, out);
  sb_puts(out, host ? ", nestcl_libm_host_variant() != 0)"
                    : c->mode == RW_SEND ? ", nestcl_env->fused)" : ", NESTCL_LIBM_VARIANT)");
  return 1;
}

/* std::exp, std::pow and std::expm1: glibc's, bit for bit (nestcl_libm.h), in the variant the host runs. */
static int call_libm(rw_ctx *c, const call_info *ci, strbuf *out)
{
  const int is_exp = (!strcmp(ci->qname, "std::exp") || !strcmp(ci->qname, "exp")) && ci->nargs == 1;
  const int is_pow = (!strcmp(ci->qname, "std::pow") || !strcmp(ci->qname, "pow")) && ci->nargs == 2;
  const int is_expm1 = (!strcmp(ci->qname, "std::expm1") || !strcmp(ci->qname, "expm1")) && ci->nargs == 1;
  if (!is_exp && !is_pow && !is_expm1)
    return 0;
  sb_puts(out, is_exp ? "nestcl_glibc_exp(" : is_pow ? "nestcl_glibc_pow(" : "nestcl_glibc_expm1(");
  render_arg(c, ci->cur, 0, out);
  if (is_pow) {
    sb_puts(out, ", ");
    render_arg(c, ci->cur, 1, out);
  }
  /* update() and the dynamics: the variant the runtime builds the kernel with (-DNESTCL_LIBM_VARIANT) */
  sb_puts(out, c->mode == RW_SEND ? ", nestcl_env->fused)" : ", NESTCL_LIBM_VARIANT)");
  return 1;
}

/* Whether an expression names the declaration called name (gsl_odeiv_step_rkf45). */
static int cursor_refers_to_name(CXCursor e, const char *name)
{
  char *n = cursor_spelling(clang_getCursorReferenced(cursor_strip(e)));
  int r = !strcmp(n, name);
  free(n);
  return r;
}

/* The field an expression names (S_.y_, through getters), or -1. */
static int field_of_expr(rw_ctx *c, CXCursor e)
{
  CXCursor b = getter_target(c, cursor_strip(e));
  return clang_getCursorKind(b) == CXCursor_MemberRefExpr ? ir_find_field(c->m, clang_getCursorReferenced(b)) : -1;
}

static CXCursor address_operand(CXCursor e);

/* &v[ 0 ] of a vector field v (NEST's &S_.y_[ 0 ]): v's index, or -1. */
static int first_element_field(rw_ctx *c, CXCursor e)
{
  CXCursor s = address_operand(e);
  if (clang_Cursor_isNull(s) ||
      (clang_getCursorKind(s) != CXCursor_CallExpr && clang_getCursorKind(s) != CXCursor_ArraySubscriptExpr))
    return -1;
  cursor_kids k = cursor_children(s);
  int fi = -1, zero = 0;
  for (int j = 0; j < k.n; j++) {
    CXCursor x = cursor_strip(k.c[j]);
    if (clang_getCursorKind(x) == CXCursor_MemberRefExpr && fi < 0) {
      fi = field_of_expr(c, x);
    } else if (clang_getCursorKind(x) == CXCursor_IntegerLiteral) {
      CXEvalResult r = clang_Cursor_Evaluate(x);
      zero = r && clang_EvalResult_getKind(r) == CXEval_Int && clang_EvalResult_getAsLongLong(r) == 0;
      if (r)
        clang_EvalResult_dispose(r);
    }
  }
  free(k.c);
  return zero ? fi : -1;
}

/* The operand of &x, or a null cursor when e is not an address-of. */
static CXCursor address_operand(CXCursor e)
{
  CXCursor u = cursor_strip(e);
  CXCursor r = clang_getNullCursor();
  if (clang_getCursorKind(u) == CXCursor_UnaryOperator) {
    CXToken *toks = NULL;
    unsigned nt = 0;
    CXTranslationUnit tu = clang_Cursor_getTranslationUnit(u);
    clang_tokenize(tu, clang_getCursorExtent(u), &toks, &nt);
    if (nt >= 2) {
      CXString ts = clang_getTokenSpelling(tu, toks[0]);
      if (!strcmp(clang_getCString(ts), "&")) {
        cursor_kids k = cursor_children(u);
        if (k.n == 1)
          r = cursor_strip(k.c[0]);
        free(k.c);
      }
      clang_disposeString(ts);
    }
    if (toks)
      clang_disposeTokens(tu, toks, nt);
  }
  return r;
}

/*
 * gsl_odeiv_evolve_apply( e, c, s, &sys, &t, t1, &h, y ) with the rkf45
 * stepper and a standard control (init_buffers_()): one call of the device's
 * RKF45 (nestcl_rkf45.h) on the neuron's state vector, with the model's
 * dynamics over its context nestcl_ode (translate.c emits both).
 */
static int call_evolve_apply(rw_ctx *c, const call_info *ci, strbuf *out)
{
  if (!name_is(ci, "gsl_odeiv_evolve_apply"))
    return 0;
  ir_model *m = c->m;
  if (ci->nargs != 8 || !m->has_ode) {
    error_at(c, ci->cur, "gsl_odeiv_evolve_apply", "init_buffers_() does not set B_.sys_.function to the dynamics");
    return 1;
  }
  if (clang_Cursor_isNull(m->ode_dyn)) {
    error_at(c, m->ode_assign, "this dynamics function", "its definition is not in the model's files");
    return 1;
  }
  if (clang_Cursor_isNull(m->ode_step) || clang_Cursor_getNumArguments(m->ode_step) != 2 ||
      !cursor_refers_to_name(clang_Cursor_getArgument(m->ode_step, 0), "gsl_odeiv_step_rkf45")) {
    error_at(c, clang_Cursor_isNull(m->ode_step) ? ci->cur : m->ode_step, "a GSL stepper other than rkf45",
             "the device reproduces gsl_odeiv_step_rkf45 only");
    return 1;
  }
  char *cn = clang_Cursor_isNull(m->ode_control) ? xstrdup("") : cursor_spelling(m->ode_control);
  int cargs = clang_Cursor_isNull(m->ode_control) ? -1 : clang_Cursor_getNumArguments(m->ode_control);
  const char *ctl = !strcmp(cn, "gsl_odeiv_control_y_new") && cargs == 2    ? "nestcl_rkf45_control_y("
                    : !strcmp(cn, "gsl_odeiv_control_yp_new") && cargs == 2 ? "nestcl_rkf45_control_yp("
                    : !strcmp(cn, "gsl_odeiv_control_standard_new") && cargs == 4 ? "nestcl_rkf45_control_standard("
                                                                                    : NULL;
  free(cn);
  if (!ctl) {
    error_at(c, clang_Cursor_isNull(m->ode_control) ? ci->cur : m->ode_control, "this GSL step-size control",
             "the device reproduces the standard controls (gsl_odeiv_control_y_new, _yp_new, _standard_new)");
    return 1;
  }
  int yi = field_of_expr(c, clang_Cursor_getArgument(ci->cur, 7));
  if (yi < 0)
    yi = first_element_field(c, clang_Cursor_getArgument(ci->cur, 7));
  if (yi < 0 || m->fields[yi].type != IR_T_DOUBLE || m->fields[yi].role != IR_ROLE_STATE ||
      yi != ir_ode_field(m)) {
    error_at(c, clang_Cursor_getArgument(ci->cur, 7), "this ODE state vector",
             yi >= 0 && ir_per_receptor(&m->fields[yi])
                 ? "a state vector sized at run time has no SoA layout unless the model resizes it to A + B * n_receptors()"
                 : "it must be a double array of State_ (fixed size, or resized to A + B * n_receptors())");
    return 1;
  }
  CXCursor hv = address_operand(clang_Cursor_getArgument(ci->cur, 6));
  int hi = clang_Cursor_isNull(hv) ? -1 : field_of_expr(c, hv);
  if (hi < 0 || m->fields[hi].array_len != 0 || m->fields[hi].type != IR_T_DOUBLE) {
    error_at(c, clang_Cursor_getArgument(ci->cur, 6), "this step size argument",
             "it must be the address of a double member (NEST's B_.IntegrationStep_)");
    return 1;
  }
  CXCursor tv = address_operand(clang_Cursor_getArgument(ci->cur, 4));
  if (clang_Cursor_isNull(tv) || clang_getCursorKind(tv) != CXCursor_DeclRefExpr ||
      !is_local_decl(clang_getCursorReferenced(tv))) {
    error_at(c, clang_Cursor_getArgument(ci->cur, 4), "this time argument", "it must be the address of a local double");
    return 1;
  }
  c->used[yi] = 1;
  sb_printf(out, "%s_nestcl_evolve(&nestcl_ode, %s", m->name, ctl);
  for (int k = 0; k < cargs; k++) {
    rw_render(c, clang_Cursor_getArgument(m->ode_control, (unsigned)k), out);
    sb_puts(out, ", ");
  }
  sb_puts(out, "NESTCL_LIBM_VARIANT), ");
  render_arg(c, ci->cur, 4, out);
  sb_puts(out, ", ");
  render_arg(c, ci->cur, 5, out);
  sb_puts(out, ", ");
  render_arg(c, ci->cur, 6, out);
  sb_printf(out, ", %s, n, nestcl_i)", m->fields[yi].c_name);
  return 1;
}

/* Whether a parameter's type is the synapse's common properties class. */
static int is_cp_param(rw_ctx *c, CXCursor parm)
{
  CXType t = clang_getCursorType(parm);
  if (t.kind == CXType_LValueReference || t.kind == CXType_RValueReference)
    t = clang_getPointeeType(t);
  CXCursor d = clang_getTypeDeclaration(clang_getCanonicalType(t));
  return !clang_Cursor_isNull(c->m->cp_cls) && !clang_Cursor_isNull(d) &&
         clang_equalCursors(clang_getCanonicalCursor(d), clang_getCanonicalCursor(c->m->cp_cls));
}

/* The generated function name of a synapse helper. */
static void helper_name(rw_ctx *c, CXCursor method, strbuf *out)
{
  char *n = cursor_spelling(method);
  sb_printf(out, "nestcl_syn_%s_%s", c->m->name, n);
  free(n);
}

/* facilitate_( w, k, cp ): the model's own methods become functions (synapse_helpers), called with the synapse. */
static int call_syn_helper(rw_ctx *c, const call_info *ci, strbuf *out)
{
  int k, j;
  if (ci->ck != CXCursor_CXXMethod || !is_model_scope(c, clang_getCursorSemanticParent(ci->callee)) ||
      clang_CXXMethod_isVirtual(ci->callee) || clang_CXXMethod_isStatic(ci->callee))
    return 0;
  CXCursor def = clang_getCursorDefinition(ci->callee);
  if (clang_Cursor_isNull(def) || clang_Cursor_isNull(rw_body_of(def))) {
    char *what = xasprintf("call to '%s'", ci->qname);
    error_at(c, ci->cur, what, "its definition is not in the model's files");
    free(what);
    return 1;
  }
  for (j = 0; j < c->m->n_helpers; j++)
    if (clang_equalCursors(clang_getCanonicalCursor(c->m->helpers[j]), clang_getCanonicalCursor(def)))
      break;
  if (j == c->m->n_helpers) {
    c->m->helpers = xrealloc(c->m->helpers, sizeof *c->m->helpers * (size_t)(c->m->n_helpers + 1));
    c->m->helpers[c->m->n_helpers++] = def;
  }
  helper_name(c, def, out);
  sb_puts(out, "(nestcl_self, nestcl_cp, nestcl_env, nestcl_w");
  for (k = 0; k < ci->nargs; k++) {
    if (k < clang_Cursor_getNumArguments(def) && is_cp_param(c, clang_Cursor_getArgument(def, (unsigned)k)))
      continue; /* the common properties travel as nestcl_cp */
    sb_puts(out, ", ");
    render_arg(c, ci->cur, k, out);
  }
  sb_putc(out, ')');
  return 1;
}

/* A synapse's ConnectionBase::set_status( d, cm ) and CommonSynapseProperties::set_status: delay and
 * weight recorder are the engine's. */
static int call_base_status(rw_ctx *c, const call_info *ci, strbuf *out)
{
  if (c->m->kind != IR_KIND_SYNAPSE || !name_is(ci, "set_status") || ci->nargs != 2)
    return 0;
  sb_puts(out, "((void)0) /* the base's keys (delay) are the engine's */");
  return 1;
}

/* get_target( t ) anywhere but in the target's declaration and the event's receiver. */
static int call_get_target(rw_ctx *c, const call_info *ci, strbuf *out)
{
  (void)out;
  if (!name_is(ci, "get_target"))
    return 0;
  error_at(c, ci->cur, "this use of get_target()", "the target is only read through its spike history and receives the event");
  return 1;
}

/* ---- constants the device path may assume, and the statements they leave out ---- */

static int no_side_effect(CXCursor e)
{
  int hit = 0;
  if (visit_side_effect(e, clang_getNullCursor(), &hit) == CXChildVisit_Recurse)
    clang_visitChildren(e, visit_side_effect, &hit);
  return !hit;
}

/* A call's callee name and the name of the callee's class. */
static int call_is(CXCursor call, const char *name, const char *cls)
{
  CXCursor callee = clang_getCursorReferenced(call);
  char *n = call_name(call);
  char *k = cursor_spelling(clang_getCursorSemanticParent(callee));
  int r = !strcmp(n, name) && (!cls || strstr(k, cls));
  free(n);
  free(k);
  return r;
}

/*
 * The value of a condition that is constant on the device, and why. Constant
 * are: literals; a parameter that update() binds to a constant (parse.c,
 * detect_update_forward) and !, &&, ||, ==, != over such; and two of NEST's
 * settings, each kept so by the NEST glue, which refuses a node otherwise
 * (emit_glue.c): FlushEventMechanism::flush_event_is_due( t ) is false (the
 * flush interval is infinite, NEST's default: its steps are LONG_MAX, and
 * t - last_event_time_ >= LONG_MAX never holds for last_event_time_ > 0) and
 * SimulationManager::get_wfr_interpolation_order() is 3 (NEST's default).
 * mark: note on the model that its glue must refuse the other cases.
 */
static int const_value(rw_ctx *c, CXCursor e, long long *v, const char **why, int mark)
{
  e = cursor_strip(e);
  enum CXCursorKind k = clang_getCursorKind(e);
  if (k == CXCursor_CXXBoolLiteralExpr || k == CXCursor_IntegerLiteral) {
    CXEvalResult r = clang_Cursor_Evaluate(e);
    int ok = r && clang_EvalResult_getKind(r) == CXEval_Int;
    if (ok)
      *v = clang_EvalResult_getAsLongLong(r);
    if (r)
      clang_EvalResult_dispose(r);
    if (ok && !*why)
      *why = "a literal";
    return ok;
  }
  if (k == CXCursor_DeclRefExpr) {
    CXCursor ref = clang_getCanonicalCursor(clang_getCursorReferenced(e));
    if (!clang_equalCursors(c->fn, c->m->methods[IR_M_UPDATE]))
      return 0;
    for (int j = 0; j < c->m->n_bound; j++)
      if (clang_equalCursors(ref, clang_getCanonicalCursor(c->m->bound_parm[j]))) {
        *v = c->m->bound_value[j];
        *why = "update() passes this parameter as a constant";
        return 1;
      }
    return 0;
  }
  if (k == CXCursor_UnaryOperator && clang_getCursorUnaryOperatorKind(e) == CXUnaryOperator_LNot) {
    cursor_kids ch = cursor_children(e);
    int ok = ch.n == 1 && const_value(c, ch.c[0], v, why, mark);
    free(ch.c);
    if (ok)
      *v = !*v;
    return ok;
  }
  if (k == CXCursor_BinaryOperator) {
    enum CXBinaryOperatorKind op = clang_getCursorBinaryOperatorKind(e);
    cursor_kids ch = cursor_children(e);
    long long a, b;
    int ok = 0;
    if (ch.n == 2 && (op == CXBinaryOperator_LAnd || op == CXBinaryOperator_LOr)) {
      /* C's short circuit: a decided left operand decides alone */
      if (const_value(c, ch.c[0], &a, why, mark)) {
        if ((op == CXBinaryOperator_LAnd && !a) || (op == CXBinaryOperator_LOr && a)) {
          *v = a != 0;
          ok = 1;
        } else if (const_value(c, ch.c[1], &b, why, mark)) {
          *v = b != 0;
          ok = 1;
        }
      }
    } else if (ch.n == 2 && (op == CXBinaryOperator_EQ || op == CXBinaryOperator_NE)) {
      ok = const_value(c, ch.c[0], &a, why, mark) && const_value(c, ch.c[1], &b, why, mark);
      if (ok)
        *v = op == CXBinaryOperator_EQ ? a == b : a != b;
    }
    free(ch.c);
    return ok;
  }
  if (k == CXCursor_CallExpr && c->mode == RW_UPDATE && call_is(e, "flush_event_is_due", "FlushEventMechanism") &&
      clang_Cursor_getNumArguments(e) == 1 && no_side_effect(clang_Cursor_getArgument(e, 0))) {
    *v = 0;
    *why = "flush events are off on the device: the NEST glue refuses a node with a finite flush_event_send_interval";
    if (mark)
      c->m->drops_flush_events = 1;
    return 1;
  }
  if (k == CXCursor_CallExpr && (c->mode == RW_UPDATE || c->mode == RW_DYN) &&
      call_is(e, "get_wfr_interpolation_order", "SimulationManager") && clang_Cursor_getNumArguments(e) == 0) {
    *v = 3;
    *why = "NEST's default wfr_interpolation_order: the NEST glue refuses a node under another order";
    if (mark)
      c->m->wfr_order_assumed = 1;
    return 1;
  }
  return 0;
}

/* A member of Buffers_ that is no field and no input buffer (host-only: the gap-junction coefficients). */
static int is_host_buffer_member(rw_ctx *c, CXCursor ref)
{
  return clang_getCursorKind(ref) == CXCursor_FieldDecl && !clang_Cursor_isNull(c->m->structs[3]) &&
         clang_equalCursors(clang_getCanonicalCursor(clang_getCursorSemanticParent(ref)),
                            clang_getCanonicalCursor(c->m->structs[3])) &&
         ir_find_field(c->m, ref) < 0 && ir_find_channel_group(c->m, ref) < 0;
}

static enum CXChildVisitResult visit_member_use(CXCursor x, CXCursor parent, CXClientData data)
{
  CXCursor *decl = data;
  (void)parent;
  if (clang_getCursorKind(x) == CXCursor_MemberRefExpr &&
      clang_equalCursors(clang_getCanonicalCursor(clang_getCursorReferenced(x)), clang_getCanonicalCursor(*decl))) {
    *decl = clang_getNullCursor();
    return CXChildVisit_Break;
  }
  return CXChildVisit_Recurse;
}

/* Whether handle( GapJunctionEvent& ) names member ref: a gap-junction input (interpolation_coefficients). */
static int is_gap_input(rw_ctx *c, CXCursor ref)
{
  CXCursor d = ref;
  if (!c->m->gap_junctions || !is_host_buffer_member(c, ref))
    return 0;
  clang_visitChildren(c->m->gap_handler, visit_member_use, &d);
  return clang_Cursor_isNull(d);
}

/* The case of a switch on a constant that runs: its statements up to its break (no fall-through), or 0. */
static int switch_live(rw_ctx *c, CXCursor sw, cursor_kids *live, long long *v, const char **why, int mark)
{
  cursor_kids ch = cursor_children(sw);
  int ok = 0;
  live->c = NULL;
  live->n = 0;
  if (ch.n == 2 && clang_getCursorKind(ch.c[1]) == CXCursor_CompoundStmt && const_value(c, ch.c[0], v, why, mark)) {
    cursor_kids body = cursor_children(ch.c[1]);
    int at = -1, j;
    for (int pass = 0; pass < 2 && at < 0; pass++)
      for (j = 0; j < body.n && at < 0; j++) {
        enum CXCursorKind bk = clang_getCursorKind(body.c[j]);
        if (pass == 0 && bk == CXCursor_CaseStmt) {
          cursor_kids cs = cursor_children(body.c[j]);
          CXEvalResult r = cs.n == 2 ? clang_Cursor_Evaluate(cs.c[0]) : NULL;
          if (r && clang_EvalResult_getKind(r) == CXEval_Int && clang_EvalResult_getAsLongLong(r) == *v)
            at = j;
          if (r)
            clang_EvalResult_dispose(r);
          free(cs.c);
        } else if (pass == 1 && bk == CXCursor_DefaultStmt) {
          at = j;
        }
      }
    if (at >= 0) {
      cursor_kids cs = cursor_children(body.c[at]);
      CXCursor first = cs.n >= 1 ? cs.c[cs.n - 1] : clang_getNullCursor();
      enum CXCursorKind fk = clang_getCursorKind(first);
      free(cs.c);
      ok = !clang_Cursor_isNull(first) && fk != CXCursor_CaseStmt && fk != CXCursor_DefaultStmt;
      if (ok && fk != CXCursor_BreakStmt) {
        live->c = xrealloc(live->c, sizeof *live->c * (size_t)(body.n + 1));
        live->c[live->n++] = first;
        for (j = at + 1; j < body.n; j++) {
          enum CXCursorKind bk = clang_getCursorKind(body.c[j]);
          if (bk == CXCursor_BreakStmt)
            break;
          if (bk == CXCursor_CaseStmt || bk == CXCursor_DefaultStmt) {
            ok = 0; /* falls through into another case */
            break;
          }
          live->c[live->n++] = body.c[j];
        }
      }
    }
    free(body.c);
  }
  free(ch.c);
  if (!ok) {
    free(live->c);
    live->c = NULL;
    live->n = 0;
  }
  return ok;
}

static int is_dropped(const rw_ctx *c, CXCursor s, const char **why)
{
  for (int k = 0; k < c->n_dropped; k++)
    if (clang_equalCursors(c->dropped[k], s)) {
      if (why)
        *why = c->drop_why[k];
      return 1;
    }
  return 0;
}

static void drop(rw_ctx *c, CXCursor s, const char *why)
{
  if (is_dropped(c, s, NULL))
    return;
  c->dropped = xrealloc(c->dropped, sizeof *c->dropped * (size_t)(c->n_dropped + 1));
  c->drop_why = xrealloc(c->drop_why, sizeof *c->drop_why * (size_t)(c->n_dropped + 1));
  c->dropped[c->n_dropped] = s;
  c->drop_why[c->n_dropped++] = why;
}

/* The locals of the function and their uses on the path that runs (plan_drops). */
typedef struct drop_plan {
  rw_ctx *c;
  CXCursor *vars;  /* VarDecls */
  CXCursor *decls; /* their DeclStmts */
  int *uses;
  int n;
  CXCursor *stores; /* statements v[ i ] = x into a local v */
  int *store_var;
  int n_stores;
} drop_plan;

static int plan_var(const drop_plan *p, CXCursor ref)
{
  ref = clang_getCanonicalCursor(ref);
  for (int k = 0; k < p->n; k++)
    if (clang_equalCursors(ref, clang_getCanonicalCursor(p->vars[k])))
      return k;
  return -1;
}

static void collect_locals(drop_plan *p, CXCursor cur)
{
  cursor_kids ch = cursor_children(cur);
  for (int k = 0; k < ch.n; k++) {
    if (clang_getCursorKind(cur) == CXCursor_DeclStmt && clang_getCursorKind(ch.c[k]) == CXCursor_VarDecl) {
      p->vars = xrealloc(p->vars, sizeof *p->vars * (size_t)(p->n + 1));
      p->decls = xrealloc(p->decls, sizeof *p->decls * (size_t)(p->n + 1));
      p->vars[p->n] = ch.c[k];
      p->decls[p->n++] = cur;
    }
    collect_locals(p, ch.c[k]);
  }
  free(ch.c);
}

/* Statement s is v[ i ] = x (v a local array or vector): the local's index, with i and x. */
static int store_into_local(const drop_plan *p, CXCursor s, CXCursor *idx, CXCursor *val)
{
  int vi = -1;
  if (clang_getCursorKind(s) != CXCursor_BinaryOperator || clang_getCursorBinaryOperatorKind(s) != CXBinaryOperator_Assign)
    return -1;
  cursor_kids ops = cursor_children(s);
  if (ops.n == 2) {
    CXCursor l = cursor_strip(ops.c[0]);
    cursor_kids lk = cursor_children(l);
    CXCursor base = clang_getNullCursor();
    if (clang_getCursorKind(l) == CXCursor_ArraySubscriptExpr && lk.n == 2) {
      base = cursor_strip(lk.c[0]);
      *idx = lk.c[1];
    } else if (clang_getCursorKind(l) == CXCursor_CallExpr && callee_named(l, "operator[]") && lk.n == 3) {
      base = cursor_strip(lk.c[0]);
      *idx = lk.c[2];
    }
    if (!clang_Cursor_isNull(base) && clang_getCursorKind(base) == CXCursor_DeclRefExpr) {
      vi = plan_var(p, clang_getCursorReferenced(base));
      *val = ops.c[1];
    }
    free(lk.c);
  }
  free(ops.c);
  return vi;
}

/* An initialiser that a dropped declaration may skip: no side effect, and calls only of const methods, kernel(),
 * the math table, and constructors of std::vector and of NEST's events. */
static enum CXChildVisitResult visit_pure_init(CXCursor x, CXCursor parent, CXClientData data)
{
  int *impure = data;
  (void)parent;
  if (clang_getCursorKind(x) == CXCursor_CallExpr) {
    CXCursor callee = clang_getCursorReferenced(x);
    enum CXCursorKind ck = clang_getCursorKind(callee);
    char *n = cursor_spelling(callee);
    char *q = cursor_qualified_name(callee);
    int ok = (ck == CXCursor_CXXMethod && clang_CXXMethod_isConst(callee)) ||
             (ck == CXCursor_FunctionDecl && !strcmp(q, "kernel")) ||
             math_lookup(q, clang_Cursor_getNumArguments(x)) != NULL ||
             (ck == CXCursor_Constructor && (!strcmp(n, "vector") || (strlen(n) > 5 && !strcmp(n + strlen(n) - 5, "Event"))));
    free(n);
    free(q);
    if (!ok) {
      *impure = 1;
      return CXChildVisit_Break;
    }
  }
  return CXChildVisit_Recurse;
}

/* An expression with no side effect and only such calls. */
static int pure_expr(CXCursor e)
{
  int impure = !no_side_effect(e);
  if (!impure && visit_pure_init(e, clang_getNullCursor(), &impure) == CXChildVisit_Recurse)
    clang_visitChildren(e, visit_pure_init, &impure);
  return !impure;
}

static void count_uses(drop_plan *p, CXCursor cur)
{
  rw_ctx *c = p->c;
  enum CXCursorKind k = clang_getCursorKind(cur);
  long long v;
  const char *why = NULL;
  if (is_dropped(c, cur, NULL))
    return;
  if (k == CXCursor_IfStmt) {
    cursor_kids ch = cursor_children(cur);
    if ((ch.n == 2 || ch.n == 3) && const_value(c, ch.c[0], &v, &why, 0)) {
      if (v)
        count_uses(p, ch.c[1]);
      else if (ch.n == 3)
        count_uses(p, ch.c[2]);
      free(ch.c);
      return;
    }
    free(ch.c);
  } else if (k == CXCursor_SwitchStmt) {
    cursor_kids live;
    if (switch_live(c, cur, &live, &v, &why, 0)) {
      for (int j = 0; j < live.n; j++)
        count_uses(p, live.c[j]);
      free(live.c);
      return;
    }
  } else if (k == CXCursor_DeclRefExpr) {
    int vi = plan_var(p, clang_getCursorReferenced(cur));
    if (vi >= 0)
      p->uses[vi]++;
  }
  cursor_kids ch = cursor_children(cur);
  for (int j = 0; j < ch.n; j++) {
    CXCursor idx, val;
    /* a statement: in a block, or the body of a loop or a branch */
    int is_stmt = k == CXCursor_CompoundStmt || ((k == CXCursor_ForStmt || k == CXCursor_WhileStmt) && j == ch.n - 1) ||
                  (k == CXCursor_IfStmt && j >= 1) || (k == CXCursor_DoStmt && j == 0);
    int vi = is_stmt ? store_into_local(p, ch.c[j], &idx, &val) : -1;
    if (vi >= 0 && !is_dropped(c, ch.c[j], NULL) && pure_expr(idx) && pure_expr(val)) {
      /* a store into a local is no use of it: the local may be dead */
      p->stores = xrealloc(p->stores, sizeof *p->stores * (size_t)(p->n_stores + 1));
      p->store_var = xrealloc(p->store_var, sizeof *p->store_var * (size_t)(p->n_stores + 1));
      p->stores[p->n_stores] = ch.c[j];
      p->store_var[p->n_stores++] = vi;
      count_uses(p, idx);
      count_uses(p, val);
    } else {
      count_uses(p, ch.c[j]);
    }
  }
  free(ch.c);
}

static int decl_is_droppable(CXCursor declstmt)
{
  int impure = !no_side_effect(declstmt);
  if (!impure)
    clang_visitChildren(declstmt, visit_pure_init, &impure);
  return !impure;
}

/*
 * The statements this render leaves out: (init_buffers_()) what the runtime
 * sets up itself; (a gap-junction model's update) sending its gap-junction
 * event, and resetting its host-only gap-junction buffers to the zeros they
 * hold when no gap-junction event arrives; (a forwarded update) the final
 * return, whose value update() discards; then, until nothing changes, the
 * declarations of locals that nothing on the path that runs reads (branches
 * on constants folded), and the stores into them.
 */
static void plan_drops(rw_ctx *c)
{
  ir_model *m = c->m;
  CXCursor body = rw_body_of(c->fn);
  drop_plan p;
  int changed, k;
  if (clang_Cursor_isNull(body))
    return;
  memset(&p, 0, sizeof p);
  p.c = c;
  cursor_kids stack = cursor_children(body);
  while (stack.n) {
    CXCursor s = stack.c[--stack.n];
    enum CXCursorKind sk = clang_getCursorKind(s);
    CXCursor e = cursor_strip(s);
    cursor_append_children(&stack, s);
    if (c->mode == RW_UPDATE && m->gap_junctions && clang_getCursorKind(e) == CXCursor_CallExpr) {
      int n_args = clang_Cursor_getNumArguments(e);
      if (call_is(e, "send_secondary", "EventDeliveryManager")) {
        drop(c, s, "a gap-junction event: with no secondary connection in the network (the NEST glue refuses the "
                   "node otherwise) it reaches no one");
      } else if (call_is(e, "set_coeffarray", "SecondaryEvent") && n_args == 1) {
        drop(c, s, "the coefficients of a gap-junction event, which is not sent from the device");
      } else if (call_is(e, "swap", "vector") && n_args == 1) {
        /* std::vector< double >( n, 0.0 ).swap( B_.x ) of a host-only Buffers_ member */
        CXCursor arg = cursor_strip(clang_Cursor_getArgument(e, 0));
        CXCursor ctor = find_call_below(member_base(e), "vector");
        int zero = 0;
        if (!clang_Cursor_isNull(ctor) && clang_Cursor_getNumArguments(ctor) >= 2) {
          CXEvalResult r = clang_Cursor_Evaluate(clang_Cursor_getArgument(ctor, 1));
          zero = r && ((clang_EvalResult_getKind(r) == CXEval_Float && clang_EvalResult_getAsDouble(r) == 0.0) ||
                       (clang_EvalResult_getKind(r) == CXEval_Int && clang_EvalResult_getAsLongLong(r) == 0));
          if (r)
            clang_EvalResult_dispose(r);
        }
        if (zero && clang_getCursorKind(arg) == CXCursor_MemberRefExpr &&
            is_host_buffer_member(c, clang_getCursorReferenced(arg)) && no_side_effect(ctor))
          drop(c, s, "resets a host-only gap-junction buffer to zeros, which it holds as long as no gap-junction event "
                     "arrives and no waveform relaxation runs (the NEST glue refuses the node otherwise)");
      }
    }
    (void)sk;
  }
  free(stack.c);
  if (c->mode == RW_INIT) {
    cursor_kids st = cursor_children(body);
    for (k = 0; k < st.n; k++)
      if (rw_is_runtime_setup(m, st.c[k]))
        drop(c, st.c[k], "set up by the runtime");
    free(st.c);
  }
  if (c->mode == RW_UPDATE && !clang_Cursor_isNull(m->update_forward) && clang_equalCursors(c->fn, m->methods[IR_M_UPDATE])) {
    cursor_kids st = cursor_children(body);
    if (st.n && clang_getCursorKind(st.c[st.n - 1]) == CXCursor_ReturnStmt && no_side_effect(st.c[st.n - 1]))
      drop(c, st.c[st.n - 1], "update() discards the value");
    free(st.c);
  }
  collect_locals(&p, body);
  p.uses = xcalloc((size_t)(p.n ? p.n : 1), sizeof *p.uses);
  do {
    changed = 0;
    memset(p.uses, 0, sizeof *p.uses * (size_t)(p.n ? p.n : 1));
    p.n_stores = 0;
    count_uses(&p, body);
    for (k = 0; k < p.n; k++) {
      int all = 1;
      if (is_dropped(c, p.decls[k], NULL))
        continue;
      for (int j = 0; j < p.n; j++)
        if (clang_equalCursors(p.decls[j], p.decls[k]) && p.uses[j])
          all = 0;
      if (all && decl_is_droppable(p.decls[k])) {
        drop(c, p.decls[k], "a local that nothing on the device path reads");
        changed = 1;
      }
    }
    for (k = 0; k < p.n_stores; k++)
      if (is_dropped(c, p.decls[p.store_var[k]], NULL) && !is_dropped(c, p.stores[k], NULL)) {
        drop(c, p.stores[k], "a store into a local that nothing on the device path reads");
        changed = 1;
      }
  } while (changed);
  free(p.vars);
  free(p.decls);
  free(p.uses);
  free(p.stores);
  free(p.store_var);
}

/* flush_event_is_due( t ) other than as a condition the if rule folds: false on the device (const_value). */
static int call_flush_event_is_due(rw_ctx *c, const call_info *ci, strbuf *out)
{
  long long v;
  const char *why = NULL;
  if (!name_is(ci, "flush_event_is_due") || !const_value(c, ci->cur, &v, &why, 1))
    return 0;
  sb_printf(out, "(%lld /* flush_event_is_due(): %s */)", v, why);
  return 1;
}

/*
 * FlushEventMechanism::set_last_event_time( t ): only flush_event_is_due()
 * reads the time, and it is false on the device (const_value), so the call
 * goes; its argument must not act.
 */
static int call_set_last_event_time(rw_ctx *c, const call_info *ci, strbuf *out)
{
  if (!name_is(ci, "set_last_event_time") || !strstr(ci->cls, "FlushEventMechanism") || ci->nargs != 1)
    return 0;
  if (!pure_expr(clang_Cursor_getArgument(ci->cur, 0))) {
    error_at(c, ci->cur, "set_last_event_time with an argument that acts", "the device drops the call");
    return 1;
  }
  c->m->drops_flush_events = 1;
  sb_puts(out, "((void)0) /* set_last_event_time: read only by flush_event_is_due(), false on the device */");
  return 1;
}

/*
 * FlushEventMechanism::pre_run_hook() in pre_run_hook(): it converts the flush
 * interval to steps, which only flush_event_is_due() reads, and that is false
 * on the device (the NEST glue refuses a node with a finite interval), so the
 * call goes and the model's other host work still translates.
 */
static int call_flush_pre_run_hook(rw_ctx *c, const call_info *ci, strbuf *out)
{
  (void)c;
  if (!name_is(ci, "pre_run_hook") || !strstr(ci->cls, "FlushEventMechanism") || ci->nargs != 0)
    return 0;
  sb_puts(out, "((void)0) /* FlushEventMechanism::pre_run_hook: the flush interval, unused on the device */");
  return 1;
}

/* kernel().simulation_manager.get_wfr_interpolation_order(): NEST's default, 3 (const_value). */
static int call_wfr_order(rw_ctx *c, const call_info *ci, strbuf *out)
{
  long long v;
  const char *why = NULL;
  if (!name_is(ci, "get_wfr_interpolation_order") || !const_value(c, ci->cur, &v, &why, 1))
    return 0;
  sb_printf(out, "((nestcl_u64)%lld /* wfr_interpolation_order: %s */)", v, why);
  return 1;
}

/* In order: the first rule that takes a call translates it; the last two refuse what nothing took. */
static const call_rule call_rules[] = {
  {"subscript", RW_ANY, call_subscript},
  {"per-receptor size()/empty()", RW_ANY, call_receptor_count},
  {"Time::get_resolution().get_ms()", RW_ANY, call_resolution_ms},
  {"get_steps()", RW_ANY, call_get_steps},
  {"spike time stamp", RW_BIT(RW_SEND), call_spike_time},
  {"delay, rport, stdp_eps", RW_BIT(RW_SEND), call_connection_base},
  {"target's spike history", RW_BIT(RW_SEND), call_target_history},
  {"event setters and e()", RW_BIT(RW_SEND), call_event_send},
  {"history iterator", RW_BIT(RW_SEND), call_history_iterator},
  {"NEST's numerics::expm1", RW_ANY, call_nest_expm1},
  {"glibc exp, pow and expm1", RW_BIT(RW_SEND) | RW_BIT(RW_DYN) | RW_BIT(RW_UPDATE), call_libm},
  {"gsl_odeiv_evolve_apply", RW_BIT(RW_UPDATE), call_evolve_apply},
  {"synapse helper", RW_BIT(RW_SEND), call_syn_helper},
  {"get_target", RW_BIT(RW_SEND), call_get_target},
  {"Time::delay_ms_to_steps", RW_BIT(RW_PRERUN), call_delay_ms_to_steps},
  {"math", RW_ANY, call_math},
  {"RingBuffer::get_value", RW_BIT(RW_UPDATE), call_ring_get_value},
  {"get_modulo", RW_BIT(RW_UPDATE), call_ring_modulo},
  {"reset_values_all_channels", RW_BIT(RW_UPDATE), call_ring_reset},
  {"set_spiketime", RW_BIT(RW_UPDATE), call_set_spiketime},
  {"SliceRingBuffer", RW_BIT(RW_UPDATE), call_slice_ring_buffer},
  {"EventDeliveryManager::send", RW_BIT(RW_UPDATE), call_send},
  {"record_data", RW_BIT(RW_UPDATE), call_record_data},
  {"SpikeEvent::set_multiplicity", RW_BIT(RW_UPDATE), call_set_multiplicity},
  {"SpikeEvent::set_offset", RW_BIT(RW_UPDATE), call_set_offset},
  {"ArchivingNode::get_spiketime_ms", RW_BIT(RW_UPDATE), call_get_spiketime},
  {"SpikeEvent::get_offset", RW_BIT(RW_ROUTE_SPIKE), call_get_offset},
  {"Clopath history", RW_BIT(RW_UPDATE) | RW_HOST_INIT | RW_BIT(RW_INIT), call_clopath_history},
  {"random draw", RW_BIT(RW_UPDATE), call_random_draw},
  {"random distribution", RW_BIT(RW_UPDATE), call_random_dist},
  {"RandomDistribution::param", RW_BIT(RW_PRERUN), call_dist_param},
  {"spike_event_is_due", RW_BIT(RW_UPDATE), call_spike_event_is_due},
  {"flush_event_is_due", RW_BIT(RW_UPDATE), call_flush_event_is_due},
  {"set_last_event_time", RW_BIT(RW_UPDATE), call_set_last_event_time},
  {"FlushEventMechanism::pre_run_hook", RW_BIT(RW_PRERUN), call_flush_pre_run_hook},
  {"wfr_interpolation_order", RW_BIT(RW_UPDATE) | RW_BIT(RW_DYN), call_wfr_order},
  {"handler add_value", RW_ROUTES, call_route_add_value},
  {"event getter", RW_ROUTES, call_event_getter},
  {"logger init / per-receptor storage", RW_HOST_INIT, call_host_storage},
  {"synapse base set_status", RW_BIT(RW_SET), call_base_status},
  {"update_value_param", RW_BIT(RW_SET), call_update_value_param},
  {"update_value", RW_BIT(RW_SET), call_update_value},
  {"model getter", RW_ANY, call_model_getter},
  {"regula_falsi", RW_BIT(RW_UPDATE), call_regula_falsi},
  {"IAFPropagator::evaluate", RW_BIT(RW_UPDATE), call_propagator},
  {"std::tie = IAFPropagatorAlpha::evaluate", RW_BIT(RW_UPDATE), call_tie_propagator},
  {"neuron helper", RW_BIT(RW_UPDATE), call_neuron_helper},
  {"virtual call", RW_ANY, call_virtual},
  {"unknown call", RW_ANY, call_unknown},
};

static int handle_call(rw_ctx *c, CXCursor cur, strbuf *out)
{
  call_info ci;
  char *name, *qname, *cls;
  ci.cur = cur;
  ci.callee = clang_getCursorReferenced(cur);
  name = cursor_spelling(ci.callee);
  qname = cursor_qualified_name(ci.callee);
  cls = cursor_spelling(clang_getCursorSemanticParent(ci.callee));
  if (!*name) {
    free(name);
    name = call_name(cur);
  }
  ci.name = name;
  ci.qname = qname;
  ci.cls = cls;
  ci.base = member_base(cur);
  ci.nargs = clang_Cursor_getNumArguments(cur);
  ci.ck = clang_getCursorKind(ci.callee);
  for (size_t k = 0; k < sizeof call_rules / sizeof *call_rules; k++)
    if ((call_rules[k].modes & RW_BIT(c->mode)) && call_rules[k].apply(c, &ci, out))
      break;
  free(name);
  free(qname);
  free(cls);
  return 1;
}

/* ---- declarations ---- */

/* Children that stand in the text as written (type and scope names), not rendered on their own. */
static int is_type_ref(enum CXCursorKind k)
{
  return k == CXCursor_TypeRef || k == CXCursor_NamespaceRef;
}

static int is_ref_or_attribute(enum CXCursorKind k)
{
  return is_type_ref(k) || k == CXCursor_TemplateRef || k == CXCursor_MemberRef || clang_isAttribute(k);
}

/* The text of cur from pos to e with each child that lies inside it (in file f)
 * rendered in place; skip names the children left as written. */
static void render_children_in_place(rw_ctx *c, CXCursor cur, CXFile f, const char *t, unsigned pos, unsigned e,
                                     int (*skip)(enum CXCursorKind), strbuf *out)
{
  cursor_kids ch = cursor_children(cur);
  int k;
  for (k = 0; k < ch.n; k++) {
    CXFile cf;
    unsigned cb, ce;
    if (skip(clang_getCursorKind(ch.c[k])))
      continue;
    if (cursor_offsets(ch.c[k], &cf, &cb, &ce) || !clang_File_isEqual(cf, f) || cb < pos || ce > e)
      continue;
    emit_gap(t, pos, cb, out);
    rw_render(c, ch.c[k], out);
    pos = ce;
  }
  free(ch.c);
  emit_gap(t, pos, e, out);
}

/* Whether any declaration reference below cur names a non-const pointer parameter (the dynamics' f). */
typedef struct writable_find {
  int found;
} writable_find;

static enum CXChildVisitResult visit_writable_param(CXCursor x, CXCursor parent, CXClientData data)
{
  writable_find *wf = data;
  (void)parent;
  if (clang_getCursorKind(x) == CXCursor_DeclRefExpr) {
    CXCursor r = clang_getCursorReferenced(x);
    CXType t = clang_getCanonicalType(clang_getCursorType(r));
    CXString ts = clang_getTypeSpelling(t);
    /* libclang reports the element of const double[] without its qualifier: the spelling has it */
    const int is_const = !strncmp(clang_getCString(ts), "const ", 6) || clang_isConstQualifiedType(clang_getPointeeType(t));
    clang_disposeString(ts);
    if (clang_getCursorKind(r) == CXCursor_ParmDecl && (t.kind == CXType_Pointer || t.kind == CXType_IncompleteArray) &&
        !is_const) {
      wf->found = 1;
      return CXChildVisit_Break;
    }
  }
  return CXChildVisit_Recurse;
}

static int is_const_scalar_ref(rw_ctx *c, CXCursor v, CXType ty)
{
  (void)c;
  CXType pt = clang_getPointeeType(ty);
  enum CXTypeKind k = clang_getCanonicalType(pt).kind;
  writable_find wf = {0};
  if (!clang_isConstQualifiedType(pt) ||
      !(k == CXType_Double || k == CXType_Int || k == CXType_Long || k == CXType_Bool || k == CXType_UInt ||
        k == CXType_ULong))
    return 0;
  clang_visitChildren(v, visit_writable_param, &wf);
  return !wf.found;
}

static void render_vardecl(rw_ctx *c, CXCursor cur, const char *t, unsigned b, unsigned e, int from_name, strbuf *out)
{
  CXType ty = clang_getCursorType(cur);
  unsigned name_off = 0, pos;
  CXFile f;
  char *vname = cursor_spelling(cur);
  clang_getFileLocation(clang_getCursorLocation(cur), &f, NULL, NULL, &name_off);
  if (c->mode == RW_DYN && ty.kind == CXType_LValueReference && !from_name && is_const_scalar_ref(c, cur, ty)) {
    /* const double& x = ...: nothing in the dynamics writes what it names (y and the node are const,
     * the initialiser does not read f), so a copy is the same value */
    char *ts = c_type_spelling(clang_getPointeeType(ty));
    free(vname);
    if (name_off < b || name_off > e)
      name_off = b;
    sb_printf(out, "%s ", ts);
    free(ts);
    vname = cursor_spelling(cur);
    if (is_reserved_name(vname) && name_off + strlen(vname) <= e && !strncmp(t + name_off, vname, strlen(vname))) {
      sb_printf(out, "nestcl_l_%s", vname); /* as its uses are renamed (ref_reserved_local) */
      name_off += (unsigned)strlen(vname);
    }
    free(vname);
    render_children_in_place(c, cur, f, t, name_off, e, is_type_ref, out);
    return;
  }
  if (ty.kind == CXType_LValueReference || ty.kind == CXType_RValueReference || ty.kind == CXType_Pointer) {
    char *what = xasprintf("%s '%s'", ty.kind == CXType_Pointer ? "pointer" : "reference", vname);
    error_at(c, cur, what, "unresolvable pointer");
    free(what);
    free(vname);
    return;
  }
  if (clang_getCursorKind(cur) == CXCursor_VarDecl && clang_Cursor_getStorageClass(cur) == CX_SC_Static) {
    char *what = xasprintf("static local '%s'", vname);
    error_at(c, cur, what, "state shared between neurons");
    free(what);
    free(vname);
    return;
  }
  if (clang_getCursorKind(cur) == CXCursor_VarDecl && clang_getCanonicalType(ty).kind == CXType_Record) {
    char *what = xasprintf("local object '%s'", vname);
    error_at(c, cur, what, "only scalar locals exist on the device");
    free(what);
    free(vname);
    return;
  }
  free(vname);
  if (name_off < b || name_off > e)
    name_off = b;
  pos = b;
  if (!from_name) {
    /* The written type is kept unless it is C++-only (auto, std::size_t, ...). */
    int cpp_only = 0;
    unsigned p;
    for (p = b; p + 1 < name_off; p++)
      if ((t[p] == ':' && t[p + 1] == ':') || (!strncmp(t + p, "auto", 4) && (p == b || !is_ident_char(t[p - 1])) &&
                                                !is_ident_char(t[p + 4])))
        cpp_only = 1;
    if (cpp_only) {
      char *ts = c_type_spelling(ty);
      sb_printf(out, "%s ", ts);
      free(ts);
      pos = name_off;
    }
  } else {
    pos = name_off;
  }
  {
    char *vn = cursor_spelling(cur);
    if (is_reserved_name(vn) && name_off >= pos && name_off + strlen(vn) <= e && !strncmp(t + name_off, vn, strlen(vn))) {
      emit_gap(t, pos, name_off, out);
      sb_printf(out, "nestcl_l_%s", vn);
      pos = name_off + (unsigned)strlen(vn);
    }
    free(vn);
  }
  render_children_in_place(c, cur, f, t, pos, e, is_type_ref, out);
}

/* NESTML-generated update()s define helper lambdas (get_t) they may never call. */
static int lambda_unused(rw_ctx *c, CXCursor v)
{
  cursor_kids k = cursor_children(v);
  int j, is_lambda = 0;
  for (j = 0; j < k.n; j++)
    if (clang_getCursorKind(cursor_strip(k.c[j])) == CXCursor_LambdaExpr)
      is_lambda = 1;
  free(k.c);
  if (!is_lambda)
    return 0;
  return !cursor_refers_to(c->fn, v);
}

/*
 * Local objects with a meaning on the device: a SpikeEvent (its multiplicity
 * count, when update() sets one) and a distribution's param_type (its values,
 * read by call_random_dist; in pre_run_hook() read through ir_model.dists).
 * 1 when v was one and its text is out.
 */
static int render_special_local(rw_ctx *c, CXCursor v, const char *tn, strbuf *out)
{
  const int spike = !strcmp(tn, "SpikeEvent") && c->mode == RW_UPDATE;
  const int dist = !strcmp(tn, "param_type") && (c->mode == RW_UPDATE || c->mode == RW_PRERUN) &&
                   dist_kind(clang_getCursorType(v));
  if (!spike && !dist)
    return 0;
  char *vn = cursor_spelling(v);
  if (spike && c->offsets) {
    /* NEST's Event starts with offset 0 */
    if (c->multiplicity)
      sb_printf(out, "nestcl_u32 nestcl_mult_%s = 1u; ", vn);
    sb_printf(out, "double nestcl_off_%s = 0.0; /* SpikeEvent %s: its %soffset; the spike goes to the spike list */",
              vn, vn, c->multiplicity ? "multiplicity and " : "");
  } else if (spike && c->multiplicity) {
    sb_printf(out, "nestcl_u32 nestcl_mult_%s = 1u; /* SpikeEvent %s: its multiplicity; the spike goes to the spike list */",
              vn, vn);
  } else if (spike) {
    sb_printf(out, "/* SpikeEvent %s: the spike goes to the spike list */", vn);
  } else if (c->mode == RW_PRERUN) {
    sb_printf(out, "/* %s: a distribution's parameters, which the draws in update() read */", vn);
  } else {
    /* their values now, for a draw that reads them */
    CXCursor ctor = var_construct(v);
    int n = clang_Cursor_isNull(ctor) ? 0 : clang_Cursor_getNumArguments(ctor);
    sb_printf(out, "/* %s: a distribution's parameters */", vn);
    for (int a = 0; a < n; a++) {
      char *t;
      render_to(c, clang_Cursor_getArgument(ctor, (unsigned)a), &t);
      if (*t) /* a default argument renders as nothing: the draw keeps the standard's default */
        sb_printf(out, " const double nestcl_dp_%s_%d = (double)(%s);", vn, a, t);
      free(t);
    }
  }
  free(vn);
  return 1;
}

static int handle_declstmt(rw_ctx *c, CXCursor cur, const char *t, unsigned b, unsigned e, strbuf *out)
{
  cursor_kids ch = cursor_children(cur);
  int k;
  unsigned pos = b;
  CXFile f;
  unsigned dummy;
  if (ch.n == 1 && clang_getCursorKind(ch.c[0]) == CXCursor_VarDecl) {
    CXCursor v = ch.c[0];
    char *tn = decl_name_of_type(clang_getCursorType(v));
    if (render_special_local(c, v, tn, out)) {
      free(tn);
      free(ch.c);
      return 1;
    }
    free(tn);
    if (lambda_unused(c, v)) {
      char *vn = cursor_spelling(v);
      sb_printf(out, "/* %s: an unused lambda, dropped */", vn);
      free(vn);
      free(ch.c);
      return 1;
    }
    {
      cursor_kids vk = cursor_children(v);
      int j;
      for (j = 0; j < vk.n; j++) {
        CXCursor call = cursor_strip(vk.c[j]);
        if (clang_getCursorKind(call) == CXCursor_CallExpr && callee_named(call, "get_values_all_channels") &&
            clang_Cursor_getNumArguments(call) == 1 && c->mode == RW_UPDATE) {
          CXCursor bb = cursor_strip(member_base(call));
          int gi = clang_getCursorKind(bb) == CXCursor_MemberRefExpr
                       ? ir_find_channel_group(c->m, clang_getCursorReferenced(bb))
                       : -1;
          if (gi >= 0) {
            char *slot, *vn = cursor_spelling(v);
            render_to(c, clang_Cursor_getArgument(call, 0), &slot);
            c->aliases = xrealloc(c->aliases, sizeof *c->aliases * (size_t)(c->n_aliases + 1));
            c->aliases[c->n_aliases].var = v;
            c->aliases[c->n_aliases].group = gi;
            c->aliases[c->n_aliases].slot = slot;
            c->n_aliases++;
            sb_printf(out, "/* %s: the channels of B_.%s at this slot are read from the ring */", vn,
                      c->m->channels[gi].buffer);
            free(vn);
            free(vk.c);
            free(ch.c);
            return 1;
          }
        }
      }
      free(vk.c);
    }
  }
  clang_getFileLocation(clang_getCursorLocation(cur), &f, NULL, NULL, &dummy);
  for (k = 0; k < ch.n; k++) {
    CXFile cf;
    unsigned cb, ce;
    if (cursor_offsets(ch.c[k], &cf, &cb, &ce))
      continue;
    if (k == 0) {
      emit_gap(t, pos, cb, out);
      if (clang_getCursorKind(ch.c[k]) == CXCursor_VarDecl)
        render_vardecl(c, ch.c[k], t, cb, ce, 0, out);
      else
        rw_render(c, ch.c[k], out);
      pos = ce;
    } else {
      unsigned name_off = 0;
      clang_getFileLocation(clang_getCursorLocation(ch.c[k]), NULL, NULL, NULL, &name_off);
      if (name_off < pos)
        continue;
      emit_gap(t, pos, name_off, out);
      render_vardecl(c, ch.c[k], t, cb, ce, 1, out);
      pos = ce;
    }
  }
  free(ch.c);
  emit_gap(t, pos, e, out);
  return 1;
}

/* Whether the operator between a binary operator's two operands is a plain '='. */
static int is_plain_assign(rw_ctx *c, cursor_kids ops)
{
  CXFile f;
  unsigned ab, ae, bb, be, p;
  size_t size;
  const char *t;
  if (ops.n != 2 || cursor_offsets(ops.c[0], &f, &ab, &ae) || cursor_offsets(ops.c[1], NULL, &bb, &be) || bb < ae)
    return 0;
  t = file_text(c, f, &size);
  if (!t || bb > size)
    return 0;
  for (p = ae; p < bb && (t[p] == ' ' || t[p] == '\t' || t[p] == '\n'); p++)
    ;
  return p < bb && t[p] == '=' && (p + 1 >= bb || t[p + 1] != '=');
}

/* ---- the renderer: one rule per construct ---- */

/* A node and its source text: the file's text t, the node's extent [b, e). */
typedef struct node_info {
  CXCursor cur;
  CXFile f;
  const char *t;
  unsigned b, e;
  enum CXCursorKind kind;
} node_info;

/*
 * A rule for one kind of node. It returns 1 when it rendered the node (or
 * reported why it cannot be), 0 to let the next rule for the kind try; a node
 * that no rule takes is copied with its children rendered in place.
 */
typedef struct node_rule {
  enum CXCursorKind kind;
  const char *construct; /* what it translates */
  unsigned modes;        /* the modes it applies in (RW_BIT) */
  int (*apply)(rw_ctx *c, const node_info *ni, strbuf *out);
} node_rule;

/* assert( cond ): a checked condition in pre_run_hook(), nothing elsewhere. */
static void render_assert(rw_ctx *c, const node_info *ni, strbuf *out)
{
  const char *t = ni->t;
  unsigned b = ni->b, e = ni->e;
  if (c->mode == RW_PRERUN) {
    /* the condition: the argument text between the parentheses */
    unsigned lp = b, rp = e;
    while (lp < e && t[lp] != '(')
      lp++;
    while (rp > lp && t[rp - 1] != ')')
      rp--;
    if (lp < e && rp > lp + 1) {
      /* re-render the argument's AST: the first descendant inside the parentheses */
      sb_puts(out, "if (!(");
      {
        cursor_kids stack = cursor_children(ni->cur);
        int done = 0;
        while (stack.n && !done) {
          CXCursor x = stack.c[0];
          CXFile xf;
          unsigned xb, xe;
          memmove(stack.c, stack.c + 1, sizeof *stack.c * (size_t)(stack.n - 1));
          stack.n--;
          if (!cursor_offsets(x, &xf, &xb, &xe) && xb > lp && xe < rp && clang_File_isEqual(xf, ni->f)) {
            rw_render(c, x, out);
            done = 1;
          } else {
            cursor_append_children(&stack, x);
          }
        }
        free(stack.c);
        if (!done)
          sb_puts(out, "1");
      }
      sb_puts(out, ")) return nestcl_set_error(NESTCL_EINVAL, \"");
      sb_put_c_escaped(out, c->m->name);
      sb_puts(out, ": assertion failed: ");
      {
        char *txt = xstrndup(t + lp + 1, rp - lp - 2);
        sb_put_c_escaped(out, txt);
        free(txt);
      }
      sb_puts(out, "\")");
      return;
    }
  }
  sb_puts(out, "((void)0) /* assert */");
}

/* A node from a macro expansion: assert, LOG and the built-in constants; any other macro is refused. */
static void render_macro(rw_ctx *c, const node_info *ni, const ir_macro *mc, strbuf *out)
{
  static const char *const constants[] = {"INFINITY", "NAN", "M_PI", "M_E", "DBL_MAX", "HUGE_VAL"};
  if (!strcmp(mc->name, "assert")) {
    render_assert(c, ni, out);
    return;
  }
  if (!strcmp(mc->name, "LOG") && is_host_mode(c)) {
    sb_puts(out, "((void)0) /* NEST's LOG: messages stay with NEST */");
    return;
  }
  for (size_t k = 0; k < sizeof constants / sizeof *constants; k++)
    if (!strcmp(mc->name, constants[k])) {
      sb_putn(out, ni->t + ni->b, ni->e - ni->b);
      return;
    }
  char *what = xasprintf("macro '%s'", mc->name);
  error_at(c, ni->cur, what, "macros are only expanded for the built-in constants and assert");
  free(what);
}

/*
 * pre_run_hook() and constructors: V_.rng_ = get_vp_specific_rng( ... ) and
 * the like. Members without SoA layout live in the NEST node, so their set-up
 * stays there too.
 */
static int node_host_member_assign(rw_ctx *c, const node_info *ni, strbuf *out)
{
  if (ni->kind != CXCursor_BinaryOperator && !(ni->kind == CXCursor_CallExpr && callee_named(ni->cur, "operator=")))
    return 0;
  cursor_kids ops = cursor_children(ni->cur);
  int dropped = 0;
  if (ops.n == 2 || ops.n == 3) {
    CXCursor lhs = cursor_strip(ops.c[0]);
    CXCursor ref = clang_getCursorReferenced(lhs);
    if (clang_getCursorKind(lhs) == CXCursor_MemberRefExpr && clang_getCursorKind(ref) == CXCursor_FieldDecl &&
        ir_find_field(c->m, ref) < 0 && ir_find_channel_group(c->m, ref) < 0 &&
        is_model_scope(c, clang_getCursorSemanticParent(ref)) && (ni->kind == CXCursor_CallExpr || is_plain_assign(c, ops))) {
      char *fn = cursor_spelling(ref);
      sb_printf(out, "((void)0) /* %s stays on the host */", fn);
      free(fn);
      dropped = 1;
    }
  }
  free(ops.c);
  return dropped;
}

static int node_call(rw_ctx *c, const node_info *ni, strbuf *out) { return handle_call(c, ni->cur, out); }

/* S_.x_: an SoA field; other members are refused. */
static int node_member_ref(rw_ctx *c, const node_info *ni, strbuf *out)
{
  CXCursor ref = clang_getCursorReferenced(ni->cur);
  int fi = ir_find_field(c->m, ref);
  if (fi >= 0) {
    emit_field(c, ni->cur, fi, NULL, out);
    return 1;
  }
  if (clang_getCursorKind(ref) != CXCursor_FieldDecl)
    return 0;
  char *q = cursor_qualified_name(ref);
  char *what = xasprintf("member '%s'", q);
  error_at(c, ni->cur, what, ir_find_channel_group(c->m, ref) >= 0 ? "input buffers are read through get_value()"
                                                                    : "not a field of State_, Parameters_ or Variables_");
  free(what);
  free(q);
  return 1;
}

/* S_.y_[ i ] of a fixed-size array field. */
static int node_array_subscript(rw_ctx *c, const node_info *ni, strbuf *out)
{
  cursor_kids ch = cursor_children(ni->cur);
  int done = 0;
  if (ch.n == 2) {
    CXCursor bse = cursor_strip(ch.c[0]);
    int fi = clang_getCursorKind(bse) == CXCursor_MemberRefExpr ? ir_find_field(c->m, clang_getCursorReferenced(bse)) : -1;
    if (fi >= 0) {
      char *idx;
      render_to(c, ch.c[1], &idx);
      emit_field(c, ni->cur, fi, idx, out);
      free(idx);
      done = 1;
    }
  }
  free(ch.c);
  return done;
}

/* An inlined getter's parameter: the argument's rendered text. */
static int ref_substitution(rw_ctx *c, const node_info *ni, strbuf *out)
{
  CXCursor ref = clang_getCursorReferenced(ni->cur);
  for (int k = 0; k < c->n_substs; k++)
    if (clang_equalCursors(clang_getCanonicalCursor(ref), clang_getCanonicalCursor(c->substs[k].parm))) {
      sb_puts(out, c->substs[k].text);
      return 1;
    }
  return 0;
}

/* State_::set( d, p, delta_EL ): the double parameter is the E_L shift. */
static int ref_set_shift(rw_ctx *c, const node_info *ni, strbuf *out)
{
  (void)c;
  CXCursor ref = clang_getCursorReferenced(ni->cur);
  if (clang_getCursorKind(ref) != CXCursor_ParmDecl || clang_getCanonicalType(clang_getCursorType(ref)).kind != CXType_Double)
    return 0;
  sb_puts(out, "nestcl_shift");
  return 1;
}

/* An enumerator: its value. */
static int ref_enum_constant(rw_ctx *c, const node_info *ni, strbuf *out)
{
  (void)c;
  CXCursor ref = clang_getCursorReferenced(ni->cur);
  if (clang_getCursorKind(ref) != CXCursor_EnumConstantDecl)
    return 0;
  char *n = cursor_spelling(ref);
  sb_printf(out, "(%lld /* %s */)", clang_getEnumConstantDeclValue(ref), n);
  free(n);
  return 1;
}

/* update( origin, from, to ): from and to are the kernel's; origin only through get_steps(). */
static int ref_update_parameter(rw_ctx *c, const node_info *ni, strbuf *out)
{
  CXCursor ref = clang_getCursorReferenced(ni->cur);
  int j;
  if (clang_getCursorKind(ref) != CXCursor_ParmDecl)
    return 0;
  if (c->helper) {
    /* a helper's own parameters stand as written; its Time parameters are update()'s origin */
    if (rw_is_time_type(clang_getCursorType(ref))) {
      error_at(c, ni->cur, "this use of a Time parameter", "only origin.get_steps() is available on the device");
      return 1;
    }
    return 0;
  }
  for (j = 0; j < 3; j++)
    if (clang_equalCursors(clang_getCanonicalCursor(ref), clang_getCanonicalCursor(clang_Cursor_getArgument(c->fn, (unsigned)j))))
      break;
  if (j == 1 || j == 2) {
    sb_puts(out, j == 1 ? "from" : "to");
    return 1;
  }
  if (j == 0) {
    error_at(c, ni->cur, "this use of 'origin'", "only origin.get_steps() is available on the device");
    return 1;
  }
  return 0;
}

/* A handler's event used other than through its getters. */
static int ref_route_event(rw_ctx *c, const node_info *ni, strbuf *out)
{
  (void)out;
  CXCursor ref = clang_getCursorReferenced(ni->cur);
  if (clang_getCursorKind(ref) != CXCursor_ParmDecl)
    return 0;
  char *tn = decl_name_of_type(clang_getCursorType(ref));
  int is_event = strstr(tn, "Event") != NULL;
  free(tn);
  if (!is_event)
    return 0;
  error_at(c, ni->cur, "this use of the event", "only its weight, multiplicity, rport and current are routed");
  return 1;
}

/* A local named like one of the kernel's arguments: renamed nestcl_l_<name>. */
static int ref_reserved_local(rw_ctx *c, const node_info *ni, strbuf *out)
{
  (void)c;
  CXCursor ref = clang_getCursorReferenced(ni->cur);
  if (clang_getCursorKind(ref) != CXCursor_VarDecl || !is_local_decl(ref))
    return 0;
  char *vn = cursor_spelling(ref);
  int renamed = is_reserved_name(vn);
  if (renamed)
    sb_printf(out, "nestcl_l_%s", vn);
  free(vn);
  return renamed;
}

/* Other variables: an input buffer's channel alias (refused), the model's static constants, the math table's globals. */
static int ref_variable(rw_ctx *c, const node_info *ni, strbuf *out)
{
  CXCursor ref = clang_getCursorReferenced(ni->cur);
  if (clang_getCursorKind(ref) != CXCursor_VarDecl)
    return 0;
  CXCursor sp = clang_getCursorSemanticParent(ref);
  enum CXCursorKind spk = clang_getCursorKind(sp);
  for (int k = 0; k < c->n_aliases; k++)
    if (clang_equalCursors(clang_getCanonicalCursor(ref), clang_getCanonicalCursor(c->aliases[k].var))) {
      error_at(c, ni->cur, "this use of an input buffer's channels", "only input[ channel ] is read from the ring");
      return 1;
    }
  if (is_model_scope(c, sp)) {
    /* static const / constexpr members of the model are their values */
    CXEvalResult ev = clang_Cursor_Evaluate(ref);
    int done_ev = 0;
    if (ev) {
      CXEvalResultKind ek = clang_EvalResult_getKind(ev);
      if (ek == CXEval_Int) {
        if (clang_EvalResult_isUnsignedInt(ev))
          sb_printf(out, "%lluUL", clang_EvalResult_getAsUnsigned(ev));
        else
          sb_printf(out, "%lldL", clang_EvalResult_getAsLongLong(ev));
        done_ev = 1;
      } else if (ek == CXEval_Float) {
        sb_printf(out, "%.17g", clang_EvalResult_getAsDouble(ev));
        done_ev = 1;
      }
      clang_EvalResult_dispose(ev);
    }
    if (done_ev)
      return 1;
  }
  if (spk == CXCursor_FunctionDecl || spk == CXCursor_CXXMethod || spk == CXCursor_Constructor)
    return 0; /* a local: as written */
  char *q = cursor_qualified_name(ref);
  const math_entry *me = math_lookup(q, -1);
  if (me && me->kind == MATH_VAR) {
    sb_puts(out, me->name);
  } else {
    char *what = xasprintf("global '%s'", q);
    error_at(c, ni->cur, what, "not in the built-in table");
    free(what);
  }
  free(q);
  return 1;
}

/* A member named without S_. / P_. (inside the state's own methods): refused. */
static int ref_field(rw_ctx *c, const node_info *ni, strbuf *out)
{
  (void)out;
  CXCursor ref = clang_getCursorReferenced(ni->cur);
  if (clang_getCursorKind(ref) != CXCursor_FieldDecl)
    return 0;
  char *n = cursor_spelling(ref);
  char *what = xasprintf("member '%s'", n);
  error_at(c, ni->cur, what, "not a field of State_, Parameters_ or Variables_");
  free(what);
  free(n);
  return 1;
}

/* Parameters_::set returns the E_L shift that State_::set takes. */
static int node_set_return(rw_ctx *c, const node_info *ni, strbuf *out)
{
  cursor_kids ch = cursor_children(ni->cur);
  sb_puts(out, "{ ");
  if (ch.n == 1) {
    sb_puts(out, "nestcl_ret = (");
    rw_render(c, ch.c[0], out);
    sb_puts(out, "); ");
  }
  sb_printf(out, "goto %s; }", c->label[0] ? c->label : "nestcl_done");
  free(ch.c);
  return 1;
}

static int node_declstmt(rw_ctx *c, const node_info *ni, strbuf *out)
{
  return handle_declstmt(c, ni->cur, ni->t, ni->b, ni->e, out);
}

static int node_vardecl(rw_ctx *c, const node_info *ni, strbuf *out)
{
  render_vardecl(c, ni->cur, ni->t, ni->b, ni->e, 0, out);
  return 1;
}

/* throw BadProperty( "why" ) in set(), or in handle() (a weight the model refuses): the message travels with the error code. */
static int node_set_throw(rw_ctx *c, const node_info *ni, strbuf *out)
{
  CXCursor lit = clang_getNullCursor();
  cursor_kids stack = cursor_children(ni->cur);
  while (stack.n && clang_Cursor_isNull(lit)) {
    CXCursor x = stack.c[--stack.n];
    if (clang_getCursorKind(x) == CXCursor_StringLiteral) {
      lit = x;
    } else {
      cursor_append_children(&stack, x);
    }
  }
  free(stack.c);
  sb_printf(out, "return nestcl_set_error(NESTCL_EINVAL, \"%%s: %%s\", \"%s\", ", c->m->name);
  if (!clang_Cursor_isNull(lit)) {
    CXFile lf;
    unsigned lb, le;
    if (!cursor_offsets(lit, &lf, &lb, &le) && clang_File_isEqual(lf, ni->f))
      sb_putn(out, ni->t + lb, le - lb);
    else
      sb_puts(out, "\"rejected by the model\"");
  } else {
    sb_puts(out, "\"rejected by the model\"");
  }
  sb_putc(out, ')');
  return 1;
}

/* throw in pre_run_hook() or a constructor: the model rejects its parameters. */
static int node_host_throw(rw_ctx *c, const node_info *ni, strbuf *out)
{
  (void)ni;
  sb_printf(out, "return nestcl_set_error(NESTCL_EINVAL, \"%s: rejected by the model\")", c->m->name);
  return 1;
}

/* The first call below cur that constructs an object (the thrown exception). */
static enum CXChildVisitResult visit_find_ctor(CXCursor x, CXCursor parent, CXClientData data)
{
  CXCursor *found = data;
  (void)parent;
  if (clang_getCursorKind(x) == CXCursor_CallExpr &&
      clang_getCursorKind(clang_getCursorReferenced(x)) == CXCursor_Constructor) {
    *found = x;
    return CXChildVisit_Break;
  }
  return CXChildVisit_Recurse;
}

/*
 * throw X( ... ) in update() (GSLSolverFailure( get_name(), status ),
 * NumericalInstability( get_name() )): the failure is recorded beside the
 * spike counter with the neuron, the lag and the status (the exception's first
 * integer argument), and the neuron's update ends; the runtime stops the run
 * with an error that names them (nestcl/model.h, Failures).
 */
static int node_update_throw(rw_ctx *c, const node_info *ni, strbuf *out)
{
  cursor_kids k = cursor_children(ni->cur);
  CXCursor e = k.n == 1 ? k.c[0] : clang_getNullCursor();
  free(k.c);
  if (clang_Cursor_isNull(e) || !c->lag_var) {
    error_at(c, ni->cur, clang_Cursor_isNull(e) ? "a rethrow" : "a throw outside the lag loop",
             "a failure is reported with its neuron and lag");
    return 1;
  }
  char *cls = decl_name_of_type(clang_getCursorType(e));
  if (!*cls) {
    free(cls);
    error_at(c, ni->cur, "throwing a value that is not an object", "failures are reported by exception class");
    return 1;
  }
  CXCursor ctor = clang_getNullCursor();
  if (clang_getCursorKind(cursor_strip(e)) == CXCursor_CallExpr &&
      clang_getCursorKind(clang_getCursorReferenced(cursor_strip(e))) == CXCursor_Constructor)
    ctor = cursor_strip(e);
  else
    clang_visitChildren(e, visit_find_ctor, &ctor);
  const int code = ir_add_failure(c->m, cls);
  sb_printf(out, "do { nestcl_report_failure(spike_count, %du /* %s */, nestcl_i, (nestcl_u32)(%s), (int)(", code, cls,
            c->lag_var);
  int have = 0;
  for (int a = 0; !clang_Cursor_isNull(ctor) && a < clang_Cursor_getNumArguments(ctor) && !have; a++) {
    CXCursor arg = clang_Cursor_getArgument(ctor, (unsigned)a);
    enum CXTypeKind tk = clang_getCanonicalType(clang_getCursorType(arg)).kind;
    if (tk == CXType_Int || tk == CXType_Long || tk == CXType_UInt || tk == CXType_ULong) {
      rw_render(c, arg, out);
      have = 1;
    }
  }
  if (!have)
    sb_putc(out, '0');
  sb_puts(out, ")); NESTCL_ABANDON_NEURON; } while (0)");
  free(cls);
  return 1;
}

/*
 * typedef nest::model::State_ S; names a C++ scope: its uses are resolved
 * (enumerators become their values), so the typedef goes. The dynamics'
 * const model& node = *( reinterpret_cast< model* >( pnode ) ): the fields
 * it reads through node come from the context.
 */
static int node_scope_declstmt(rw_ctx *c, const node_info *ni, strbuf *out)
{
  cursor_kids ch = cursor_children(ni->cur);
  int done = 0;
  if (ch.n == 1 && clang_getCursorKind(ch.c[0]) == CXCursor_TypedefDecl &&
      clang_getCanonicalType(clang_getTypedefDeclUnderlyingType(ch.c[0])).kind == CXType_Record) {
    char *n = cursor_spelling(ch.c[0]);
    sb_printf(out, "/* typedef %s: a C++ scope, resolved */", n);
    free(n);
    done = 1;
  } else if (ch.n == 1 && c->mode == RW_DYN && clang_getCursorKind(ch.c[0]) == CXCursor_VarDecl) {
    CXType t = clang_getCursorType(ch.c[0]);
    if (t.kind == CXType_LValueReference || t.kind == CXType_Pointer) {
      CXCursor d = clang_getTypeDeclaration(clang_getCanonicalType(clang_getPointeeType(t)));
      if (clang_equalCursors(clang_getCanonicalCursor(d), clang_getCanonicalCursor(c->m->cls))) {
        char *n = cursor_spelling(ch.c[0]);
        c->node_var = ch.c[0];
        sb_printf(out, "/* %s: the neuron, whose fields the dynamics reads from nestcl_ctx */", n);
        free(n);
        done = 1;
      }
    }
  }
  free(ch.c);
  return done;
}

/* The dynamics' node and params pointer, used other than for the node's fields. */
static int ref_dyn_node(rw_ctx *c, const node_info *ni, strbuf *out)
{
  (void)out;
  CXCursor ref = clang_getCanonicalCursor(clang_getCursorReferenced(ni->cur));
  if (!clang_Cursor_isNull(c->node_var) && clang_equalCursors(ref, clang_getCanonicalCursor(c->node_var))) {
    error_at(c, ni->cur, "this use of the node", "the dynamics reads the node's fields only");
    return 1;
  }
  if (clang_Cursor_getNumArguments(c->fn) == 4 &&
      clang_equalCursors(ref, clang_getCanonicalCursor(clang_Cursor_getArgument(c->fn, 3)))) {
    error_at(c, ni->cur, "this use of the node pointer", "it is only cast to the model, once");
    return 1;
  }
  return 0;
}

/* static_cast< T >( x ), T( x ), ( T ) x: to arithmetic types only. */
static int node_cast(rw_ctx *c, const node_info *ni, strbuf *out)
{
  CXType ty = clang_getCursorType(ni->cur);
  char *ts = c_type_spelling(ty);
  CXCursor inner = clang_getNullCursor();
  cursor_kids ch = cursor_children(ni->cur);
  for (int k = 0; k < ch.n; k++) {
    enum CXCursorKind ik = clang_getCursorKind(ch.c[k]);
    if (ik != CXCursor_TypeRef && ik != CXCursor_NamespaceRef && ik != CXCursor_TemplateRef)
      inner = ch.c[k];
  }
  free(ch.c);
  if (clang_getCanonicalType(ty).kind == CXType_Record || clang_getCanonicalType(ty).kind == CXType_Pointer) {
    error_at(c, ni->cur, "this cast", "only casts to arithmetic types exist on the device");
    free(ts);
    return 1;
  }
  sb_printf(out, "((%s)(", ts);
  if (!clang_Cursor_isNull(inner))
    rw_render(c, inner, out);
  sb_puts(out, "))");
  free(ts);
  return 1;
}

/* Constructs with no device counterpart, with the reason given in the diagnostic. */
static const struct {
  enum CXCursorKind kind;
  const char *construct, *why;
  unsigned modes;
} unsupported[] = {
  {CXCursor_CXXThisExpr, "'this'", "unresolvable pointer", RW_ANY},
  {CXCursor_CXXNewExpr, "'new'", "heap allocation", RW_ANY},
  {CXCursor_CXXDeleteExpr, "'delete'", "heap allocation", RW_ANY},
  {CXCursor_CXXThrowExpr, "'throw'", "exceptions", RW_ANY},
  {CXCursor_CXXTryStmt, "'try'", "exceptions", RW_ANY},
  {CXCursor_CXXCatchStmt, "'try'", "exceptions", RW_ANY},
  {CXCursor_CXXForRangeStmt, "range-based for", "iterators; loop over an index", RW_ANY},
  {CXCursor_CXXDynamicCastExpr, "'dynamic_cast'", "run-time type information", RW_ANY},
  {CXCursor_CXXTypeidExpr, "'typeid'", "run-time type information", RW_ANY},
  {CXCursor_CXXReinterpretCastExpr, "'reinterpret_cast'", "unresolvable pointer", RW_ANY},
  {CXCursor_CXXConstCastExpr, "'const_cast'", "unresolvable pointer", RW_ANY},
  {CXCursor_LambdaExpr, "lambda", "closures", RW_ANY},
  {CXCursor_CXXNullPtrLiteralExpr, "'nullptr'", "unresolvable pointer", RW_ANY},
  {CXCursor_StringLiteral, "string literal", "no strings on the device", RW_BIT(RW_UPDATE)},
};

static int node_unsupported(rw_ctx *c, const node_info *ni, strbuf *out)
{
  (void)out;
  for (size_t k = 0; k < sizeof unsupported / sizeof *unsupported; k++)
    if (unsupported[k].kind == ni->kind && (unsupported[k].modes & RW_BIT(c->mode))) {
      error_at(c, ni->cur, unsupported[k].construct, unsupported[k].why);
      return 1;
    }
  return 0;
}

/* ---- a synapse's send(): declarations, history entries, references, return ---- */

/* Node* target = get_target( t ): the target is nestcl_env->target; iterators become entry positions. */
static int node_send_declstmt(rw_ctx *c, const node_info *ni, strbuf *out)
{
  cursor_kids ch = cursor_children(ni->cur);
  int done = 0;
  if (ch.n >= 1 && clang_getCursorKind(ch.c[0]) == CXCursor_VarDecl) {
    CXCursor v = ch.c[0];
    CXType ty = clang_getCursorType(v);
    char *vn = cursor_spelling(v);
    if (ch.n == 1 && ty.kind == CXType_Pointer && !clang_Cursor_isNull(find_call_below(v, "get_target"))) {
      c->target_var = v;
      sb_printf(out, "/* %s: the synapse's target, nestcl_env->target */", vn);
      done = 1;
    } else if (is_history_iterator(ty)) {
      int k;
      sb_puts(out, "nestcl_u32 ");
      for (k = 0; k < ch.n; k++) {
        char *n = cursor_spelling(ch.c[k]);
        sb_printf(out, "%s%s = 0u", k ? ", " : "", n);
        free(n);
      }
      sb_putc(out, ';');
      done = 1;
    }
    free(vn);
  }
  free(ch.c);
  return done;
}

/* it->t_, it->Kminus_, it->Kminus_triplet_ of a history entry: the ring's entry at that position. */
static int node_history_entry(rw_ctx *c, const node_info *ni, strbuf *out)
{
  static const struct {
    const char *member, *fn;
  } entry[] = {{"t_", "nestcl_hist_t"}, {"Kminus_", "nestcl_hist_kminus"}, {"Kminus_triplet_", "nestcl_hist_kminus_triplet"}};
  CXCursor ref = clang_getCursorReferenced(ni->cur);
  char *cls = cursor_spelling(clang_getCursorSemanticParent(ref));
  int is_entry = !strcmp(cls, "histentry");
  free(cls);
  if (!is_entry)
    return 0;
  char *mn = cursor_spelling(ref);
  cursor_kids ch = cursor_children(ni->cur);
  CXCursor it = ch.n >= 1 ? referenced_var(ch.c[0]) : clang_getNullCursor();
  free(ch.c);
  size_t k;
  for (k = 0; k < sizeof entry / sizeof *entry; k++)
    if (!strcmp(mn, entry[k].member))
      break;
  if (k == sizeof entry / sizeof *entry || clang_Cursor_isNull(it) || !is_history_iterator(clang_getCursorType(it))) {
    char *what = xasprintf("history entry member '%s'", mn);
    error_at(c, ni->cur, what, "only t_, Kminus_ and Kminus_triplet_ of an entry reached through an iterator are read");
    free(what);
  } else {
    char *itn = cursor_spelling(it);
    sb_printf(out, "%s(nestcl_env->hist, nestcl_env->target, %s)", entry[k].fn, itn);
    free(itn);
  }
  free(mn);
  return 1;
}

/* The target, the event and the common properties only appear through what the rules above translate. */
static int ref_send_object(rw_ctx *c, const node_info *ni, strbuf *out)
{
  (void)out;
  CXCursor ref = clang_getCursorReferenced(ni->cur);
  if (!clang_Cursor_isNull(c->target_var) &&
      clang_equalCursors(clang_getCanonicalCursor(ref), clang_getCanonicalCursor(c->target_var))) {
    error_at(c, ni->cur, "this use of the target", "the target is only read through its spike history and receives the event");
    return 1;
  }
  if (clang_getCursorKind(ref) != CXCursor_ParmDecl)
    return 0;
  if (is_cp_param(c, ref)) {
    error_at(c, ni->cur, "this use of the common properties", "only their members are read");
    return 1;
  }
  char *tn = decl_name_of_type(clang_getCursorType(ref));
  int is_event = strstr(tn, "Event") != NULL;
  free(tn);
  if (is_event) {
    error_at(c, ni->cur, "this use of the event", "only its time stamp, multiplicity, setters and e() are translated");
    return 1;
  }
  return 0;
}

/* send()'s return true: whether the event was sent. Helpers return their values. */
static int node_send_return(rw_ctx *c, const node_info *ni, strbuf *out)
{
  if (!clang_equalCursors(clang_getCanonicalCursor(c->fn), clang_getCanonicalCursor(c->m->syn_methods[IR_SM_SEND])))
    return 0;
  cursor_kids ch = cursor_children(ni->cur);
  int is_true = 0;
  if (ch.n == 1 && clang_getCursorKind(cursor_strip(ch.c[0])) == CXCursor_CXXBoolLiteralExpr) {
    CXFile f;
    unsigned b, e;
    if (!cursor_offsets(cursor_strip(ch.c[0]), &f, &b, &e) && e - b == 4 && !strncmp(ni->t + b, "true", 4))
      is_true = 1;
  }
  free(ch.c);
  if (is_true)
    sb_puts(out, "return nestcl_emitted;");
  else
    error_at(c, ni->cur, "send() returning other than true", "the device delivers every event it sends");
  return 1;
}

/* ---- statements on constants ---- */

/* A statement rendered on its own: expression statements get their semicolon. */
static void render_stmt(rw_ctx *c, CXCursor s, strbuf *out)
{
  enum CXCursorKind k = clang_getCursorKind(s);
  rw_render(c, s, out);
  if (k != CXCursor_CompoundStmt && k != CXCursor_IfStmt && k != CXCursor_ForStmt && k != CXCursor_WhileStmt &&
      k != CXCursor_SwitchStmt && k != CXCursor_DeclStmt && k != CXCursor_DoStmt)
    sb_putc(out, ';');
}

/* A statement plan_drops() left out: a comment (an expression statement keeps a no-op before its semicolon). */
static int node_dropped(rw_ctx *c, const node_info *ni, strbuf *out)
{
  const char *why = NULL;
  if (!is_dropped(c, ni->cur, &why))
    return 0;
  if (ni->kind == CXCursor_DeclStmt)
    sb_printf(out, "/* left out: %s */", why);
  else
    sb_printf(out, "((void)0) /* left out: %s */", why);
  return 1;
}

/* if ( c ) with c constant on the device (const_value): only the branch that runs. */
static int node_if_constant(rw_ctx *c, const node_info *ni, strbuf *out)
{
  long long v;
  const char *why = NULL;
  cursor_kids ch = cursor_children(ni->cur);
  if (!((ch.n == 2 || ch.n == 3) && clang_isExpression(clang_getCursorKind(ch.c[0])) &&
        const_value(c, ch.c[0], &v, &why, 1))) {
    free(ch.c);
    return 0;
  }
  CXCursor live = v ? ch.c[1] : ch.n == 3 ? ch.c[2] : clang_getNullCursor();
  sb_printf(out, "/* an if whose condition is %s on the device (%s): the %s */ ", v ? "true" : "false", why,
            clang_Cursor_isNull(live) ? "branch is left out" : "other branch is left out");
  if (clang_Cursor_isNull(live)) {
    sb_puts(out, "{ }");
  } else if (clang_getCursorKind(live) == CXCursor_CompoundStmt) {
    rw_render(c, live, out);
  } else {
    sb_puts(out, "{ ");
    render_stmt(c, live, out);
    sb_puts(out, " }");
  }
  free(ch.c);
  return 1;
}

/* switch ( c ) with c constant on the device: the statements of the case that runs. */
static int node_switch_constant(rw_ctx *c, const node_info *ni, strbuf *out)
{
  long long v;
  const char *why = NULL;
  cursor_kids live;
  if (!switch_live(c, ni->cur, &live, &v, &why, 1))
    return 0;
  sb_printf(out, "{ /* a switch on %lld on the device (%s): that case alone */\n", v, why);
  for (int j = 0; j < live.n; j++) {
    render_stmt(c, live.c[j], out);
    sb_putc(out, '\n');
  }
  sb_puts(out, "}");
  free(live.c);
  return 1;
}

/* By kind, in order within a kind. Unsupported constructs go last (node_unsupported, for every kind). */
static const node_rule node_rules[] = {
  {CXCursor_IfStmt, "if on a constant", RW_BIT(RW_UPDATE) | RW_BIT(RW_DYN) | RW_BIT(RW_INIT), node_if_constant},
  {CXCursor_SwitchStmt, "switch on a constant", RW_BIT(RW_UPDATE) | RW_BIT(RW_DYN) | RW_BIT(RW_INIT), node_switch_constant},
  {CXCursor_CallExpr, "call", RW_ANY, node_call},
  {CXCursor_MemberRefExpr, "history entry", RW_BIT(RW_SEND), node_history_entry},
  {CXCursor_MemberRefExpr, "member", RW_ANY, node_member_ref},
  {CXCursor_ArraySubscriptExpr, "array field element", RW_ANY, node_array_subscript},
  {CXCursor_DeclRefExpr, "inlined getter's parameter", RW_ANY, ref_substitution},
  {CXCursor_DeclRefExpr, "E_L shift", RW_BIT(RW_SET), ref_set_shift},
  {CXCursor_DeclRefExpr, "enumerator", RW_ANY, ref_enum_constant},
  {CXCursor_DeclRefExpr, "update()'s parameters", RW_BIT(RW_UPDATE), ref_update_parameter},
  {CXCursor_DeclRefExpr, "handler's event", RW_ROUTES, ref_route_event},
  {CXCursor_DeclRefExpr, "send()'s target, event, common properties", RW_BIT(RW_SEND), ref_send_object},
  {CXCursor_DeclRefExpr, "dynamics' node", RW_BIT(RW_DYN), ref_dyn_node},
  {CXCursor_DeclRefExpr, "renamed local", RW_ANY, ref_reserved_local},
  {CXCursor_DeclRefExpr, "variable", RW_ANY, ref_variable},
  {CXCursor_DeclRefExpr, "member without object", RW_ANY, ref_field},
  {CXCursor_ReturnStmt, "set()'s return", RW_BIT(RW_SET), node_set_return},
  {CXCursor_ReturnStmt, "send()'s return", RW_BIT(RW_SEND), node_send_return},
  {CXCursor_DeclStmt, "target and iterator declarations", RW_BIT(RW_SEND), node_send_declstmt},
  {CXCursor_DeclStmt, "typedef of a scope, dynamics' node", RW_BIT(RW_UPDATE) | RW_BIT(RW_DYN), node_scope_declstmt},
  {CXCursor_DeclStmt, "declaration", RW_ANY, node_declstmt},
  {CXCursor_VarDecl, "variable declaration", RW_ANY, node_vardecl},
  {CXCursor_CXXThrowExpr, "set()'s or a handler's throw", RW_BIT(RW_SET) | RW_ROUTES, node_set_throw},
  {CXCursor_CXXThrowExpr, "host throw", RW_HOST_INIT | RW_BIT(RW_INIT), node_host_throw},
  {CXCursor_CXXThrowExpr, "update()'s throw", RW_BIT(RW_UPDATE), node_update_throw},
  {CXCursor_CXXStaticCastExpr, "cast", RW_ANY, node_cast},
  {CXCursor_CXXFunctionalCastExpr, "cast", RW_ANY, node_cast},
  {CXCursor_CStyleCastExpr, "cast", RW_ANY, node_cast},
};

void rw_render(rw_ctx *c, CXCursor cur, strbuf *out)
{
  node_info ni;
  size_t size;
  const ir_macro *mc;

  ni.cur = cur;
  ni.kind = clang_getCursorKind(cur);
  if (cursor_offsets(cur, &ni.f, &ni.b, &ni.e))
    return; /* implicit node (default argument, ...) */
  ni.t = file_text(c, ni.f, &size);
  if (!ni.t || ni.e > size)
    return;

  if (c->n_dropped && node_dropped(c, &ni, out))
    return;
  mc = macro_at(c, ni.f, ni.b, ni.e);
  if (mc) {
    render_macro(c, &ni, mc, out);
    return;
  }
  if ((c->mode == RW_PRERUN || c->mode == RW_DEFAULTS) && node_host_member_assign(c, &ni, out))
    return;
  for (size_t k = 0; k < sizeof node_rules / sizeof *node_rules; k++)
    if (node_rules[k].kind == ni.kind && (node_rules[k].modes & RW_BIT(c->mode)) && node_rules[k].apply(c, &ni, out))
      return;
  if (node_unsupported(c, &ni, out))
    return;

  /* Pass-through: the original text with the children rendered in place. */
  render_children_in_place(c, cur, ni.f, ni.t, ni.b, ni.e, is_ref_or_attribute, out);
}
