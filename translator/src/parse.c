/*
 * libclang front end (see parse.h). A model class is a class defined in the
 * unit's own files that derives directly from one of NEST's node bases (Node,
 * StructuralPlasticityNode, or an ...ArchivingNode); devices (StimulationDevice,
 * RecordingDevice) are not neurons and are left alone. Only the unit's files
 * are walked: NEST's headers are parsed for types but never visited, which
 * keeps a unit at the cost of the parse itself.
 */
#include "parse.h"

#include "strbuf.h"

#include <ctype.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

char *cursor_spelling(CXCursor c)
{
  CXString s = clang_getCursorSpelling(c);
  char *r = xstrdup(clang_getCString(s) ? clang_getCString(s) : "");
  clang_disposeString(s);
  return r;
}

char *cursor_qualified_name(CXCursor c)
{
  strbuf b;
  char *parts[32];
  int n = 0, k;
  CXCursor p = c;
  sb_init(&b);
  while (!clang_Cursor_isNull(p) && n < 32) {
    enum CXCursorKind kind = clang_getCursorKind(p);
    if (kind == CXCursor_TranslationUnit || clang_isInvalid(kind))
      break;
    parts[n++] = cursor_spelling(p);
    p = clang_getCursorSemanticParent(p);
  }
  for (k = n - 1; k >= 0; k--) {
    /* NEST's own namespace adds nothing to the names the tables use. */
    if (!(k == n - 1 && !strcmp(parts[k], "nest") && n > 1)) {
      if (b.len)
        sb_puts(&b, "::");
      sb_puts(&b, parts[k]);
    }
    free(parts[k]);
  }
  return sb_take(&b);
}

/* Every source position the translator reads is a file location: a token from
 * a macro body maps to the expansion site, a macro argument to where it is
 * written. libclang up to 15 answered clang_getSpellingLocation that way too;
 * from 16 on it gives the true spelling location (inside <assert.h> for the
 * body of assert), which would hide the expansion's nodes from the model file. */
int cursor_offsets(CXCursor c, CXFile *file, unsigned *begin, unsigned *end)
{
  CXSourceRange r = clang_getCursorExtent(c);
  CXFile f1 = NULL, f2 = NULL;
  unsigned b = 0, e = 0;
  clang_getFileLocation(clang_getRangeStart(r), &f1, NULL, NULL, &b);
  clang_getFileLocation(clang_getRangeEnd(r), &f2, NULL, NULL, &e);
  if (!f1 || !f2 || !clang_File_isEqual(f1, f2) || e < b)
    return -1;
  if (file)
    *file = f1;
  *begin = b;
  *end = e;
  return 0;
}

char *cursor_where(CXCursor c)
{
  CXSourceRange r = clang_getCursorExtent(c);
  CXFile f = NULL;
  unsigned line = 0, col = 0;
  CXString name;
  char *res;
  clang_getFileLocation(clang_getRangeStart(r), &f, &line, &col, NULL);
  if (!f)
    clang_getFileLocation(clang_getCursorLocation(c), &f, &line, &col, NULL);
  name = clang_getFileName(f);
  res = xasprintf("%s:%u:%u", clang_getCString(name) ? clang_getCString(name) : "<unknown>", line, col);
  clang_disposeString(name);
  return res;
}

int is_node_base_name(const char *name)
{
  size_t n = strlen(name), a = strlen("ArchivingNode");
  return !strcmp(name, "Node") || !strcmp(name, "StructuralPlasticityNode") ||
    (n >= a && !strcmp(name + n - a, "ArchivingNode"));
}

static enum CXChildVisitResult collect_children(CXCursor c, CXCursor parent, CXClientData data)
{
  cursor_kids *k = data;
  (void)parent;
  k->c = xrealloc(k->c, sizeof *k->c * (size_t)(k->n + 1));
  k->c[k->n++] = c;
  return CXChildVisit_Continue;
}

cursor_kids cursor_children(CXCursor c)
{
  cursor_kids k = {NULL, 0};
  cursor_append_children(&k, c);
  return k;
}

void cursor_append_children(cursor_kids *k, CXCursor c)
{
  clang_visitChildren(c, collect_children, k);
}

CXCursor cursor_strip(CXCursor c)
{
  for (;;) {
    enum CXCursorKind kind = clang_getCursorKind(c);
    if (kind == CXCursor_UnexposedExpr || kind == CXCursor_ParenExpr) {
      cursor_kids k = cursor_children(c);
      if (k.n == 1) {
        c = k.c[0];
        free(k.c);
        continue;
      }
      free(k.c);
    }
    return c;
  }
}

typedef struct ref_find {
  CXCursor decl;
  int hit;
} ref_find;

static enum CXChildVisitResult visit_ref_find(CXCursor c, CXCursor parent, CXClientData data)
{
  ref_find *rf = data;
  (void)parent;
  if (clang_getCursorKind(c) == CXCursor_DeclRefExpr &&
      clang_equalCursors(clang_getCanonicalCursor(clang_getCursorReferenced(c)), clang_getCanonicalCursor(rf->decl))) {
    rf->hit = 1;
    return CXChildVisit_Break;
  }
  return CXChildVisit_Recurse;
}

int cursor_refers_to(CXCursor root, CXCursor decl)
{
  ref_find rf;
  rf.decl = decl;
  rf.hit = 0;
  clang_visitChildren(root, visit_ref_find, &rf);
  return rf.hit;
}

/* NEST's synapse base class template. */
static int is_connection_base_name(const char *name)
{
  return !strcmp(name, "Connection");
}

int parse_text_declares_model(const char *t)
{
  /* Looks for "public <Base>" with a node base; comments may match too, which
   * only costs a parse. */
  const char *p = t;
  while ((p = strstr(p, "public")) != NULL) {
    const char *q = p + 6;
    char id[128];
    size_t k = 0;
    p = q;
    if (!isspace((unsigned char)*q))
      continue;
    while (isspace((unsigned char)*q))
      q++;
    if (!strncmp(q, "nest::", 6))
      q += 6;
    while ((isalnum((unsigned char)*q) || *q == '_') && k + 1 < sizeof id)
      id[k++] = *q++;
    id[k] = 0;
    while (isspace((unsigned char)*q))
      q++;
    if (k && (is_node_base_name(id) || (is_connection_base_name(id) && *q == '<')))
      return 1;
  }
  return 0;
}

/* ---- walking the unit ---- */

typedef struct walk {
  tr_parsed *out;
  CXFile files[2];
  int n_files;
  const tr_unit *unit;
} walk;

static int in_unit_files(walk *w, CXCursor c)
{
  CXFile f = NULL;
  int k;
  clang_getFileLocation(clang_getCursorLocation(c), &f, NULL, NULL, NULL);
  if (!f)
    return 0;
  for (k = 0; k < w->n_files; k++)
    if (clang_File_isEqual(f, w->files[k]))
      return 1;
  return 0;
}

static CXCursor direct_node_base(CXCursor cls, char **base_name);

typedef struct base_find {
  CXCursor found;
  char *name;
  int (*accept)(const char *name);
} base_find;


static enum CXChildVisitResult visit_bases(CXCursor c, CXCursor parent, CXClientData data)
{
  base_find *bf = data;
  (void)parent;
  if (clang_getCursorKind(c) == CXCursor_CXXBaseSpecifier) {
    CXCursor ref = clang_getTypeDeclaration(clang_getCursorType(c));
    char *name = cursor_spelling(ref);
    if (clang_Cursor_isNull(ref) || !*name) {
      /* A template base (UrbanczikArchivingNode< P >) names its template. */
      free(name);
      name = cursor_spelling(c);
      {
        char *lt = strchr(name, '<');
        char *colon;
        if (lt)
          *lt = 0;
        while ((colon = strstr(name, "::")) != NULL)
          memmove(name, colon + 2, strlen(colon + 2) + 1);
        while (*name && isspace((unsigned char)name[strlen(name) - 1]))
          name[strlen(name) - 1] = 0;
      }
    }
    if (bf->accept(name) && clang_Cursor_isNull(bf->found)) {
      bf->found = c;
      bf->name = name;
    } else {
      free(name);
    }
  }
  return CXChildVisit_Continue;
}

static CXCursor direct_base(CXCursor cls, int (*accept)(const char *), char **base_name)
{
  base_find bf;
  bf.found = clang_getNullCursor();
  bf.name = NULL;
  bf.accept = accept;
  clang_visitChildren(cls, visit_bases, &bf);
  if (base_name)
    *base_name = bf.name;
  else
    free(bf.name);
  return bf.found;
}

static CXCursor direct_node_base(CXCursor cls, char **base_name)
{
  return direct_base(cls, is_node_base_name, base_name);
}

static int struct_index(const char *name)
{
  int k;
  for (k = 0; k < 4; k++)
    if (!strcmp(name, ir_struct_names[k]))
      return k;
  return -1;
}

/* The declaration name of a record type, e.g. "vector", and its first template argument. */
/* A type as its declaration names it. clang 16 on wraps every type written in
 * the source in an elaborated type that prints as written ("RngPtr"), where
 * clang 14 printed a typedef, class or enum with its scope ("nest::RngPtr").
 * Unwrapping those gives clang 14's spelling on both, so messages do not depend
 * on the version; a template specialisation keeps its wrapper, as it prints
 * without scope on its own ("vector<std::string>"). */
static CXType type_as_declared(CXType t)
{
#if CINDEX_VERSION_MAJOR > 0 || CINDEX_VERSION_MINOR >= 50
  while (t.kind == CXType_Elaborated) {
    CXType named = clang_Type_getNamedType(t);
    if (named.kind != CXType_Typedef && named.kind != CXType_Record && named.kind != CXType_Enum &&
        named.kind != CXType_Elaborated)
      break;
    t = named;
  }
#endif
  return t;
}

static char *type_decl_name(CXType t)
{
  return cursor_spelling(clang_getTypeDeclaration(clang_getCanonicalType(t)));
}

static int scalar_type(CXType t, ir_type *out)
{
  switch (clang_getCanonicalType(t).kind) {
  case CXType_Double:
    *out = IR_T_DOUBLE;
    return 1;
  case CXType_Long:
  case CXType_LongLong:
    *out = IR_T_LONG;
    return 1;
  case CXType_Int:
    *out = IR_T_INT;
    return 1;
  case CXType_Bool:
    *out = IR_T_BOOL;
    return 1;
  case CXType_ULong:
  case CXType_ULongLong:
    *out = IR_T_SIZE;
    return 1;
  case CXType_UInt:
    *out = IR_T_UINT;
    return 1;
  default:
    return 0;
  }
}

static void add_diag_at(ir_model *m, CXCursor at, int is_error, const char *fmt_text)
{
  char *where = cursor_where(at);
  char *t = xasprintf("%s: %s: %s", where, is_error ? "error" : "warning", fmt_text);
  ir_diag_add(m, is_error, t);
  free(t);
  free(where);
}

typedef struct field_walk {
  ir_model *m;
  int si;
} field_walk;

static void add_channel_groups(ir_model *m, CXCursor decl, const char *member, ir_buffer_kind kind, int count);

/* A plain member of Buffers_ that stays a field; takes over *member. */
static ir_field *add_buffer_field(ir_model *m, CXCursor decl, char **member, ir_type ty)
{
  ir_field *f = ir_add_field(m);
  f->member = *member;
  *member = NULL;
  f->struct_name = xstrdup("Buffers_");
  f->role = IR_ROLE_BUFFER;
  f->type = ty;
  f->decl = decl;
  return f;
}

static int linear_in_k(const ir_model *m, CXCursor e, long *a, long *b, int depth);

/* Whether pre_run_hook() or init_buffers_() resizes Buffers_ member decl to other than K elements. */
typedef struct resize_find {
  const ir_model *m;
  CXCursor decl;
  int other;
} resize_find;

static enum CXChildVisitResult visit_buffer_resize(CXCursor c, CXCursor parent, CXClientData data)
{
  resize_find *rf = data;
  (void)parent;
  if (clang_getCursorKind(c) != CXCursor_CallExpr || clang_Cursor_getNumArguments(c) < 1)
    return CXChildVisit_Recurse;
  char *n = cursor_spelling(clang_getCursorReferenced(c));
  if (!strcmp(n, "resize")) {
    cursor_kids ch = cursor_children(c);
    if (ch.n >= 1 && clang_getCursorKind(cursor_strip(ch.c[0])) == CXCursor_MemberRefExpr) {
      cursor_kids base = cursor_children(cursor_strip(ch.c[0]));
      long a = 0, b = 0;
      if (base.n == 1 && clang_getCursorKind(cursor_strip(base.c[0])) == CXCursor_MemberRefExpr &&
          clang_equalCursors(clang_getCanonicalCursor(clang_getCursorReferenced(cursor_strip(base.c[0]))),
                             clang_getCanonicalCursor(rf->decl)) &&
          !(linear_in_k(rf->m, clang_Cursor_getArgument(c, 0), &a, &b, 0) && a == 0 && b == 1))
        rf->other = 1;
      free(base.c);
    }
    free(ch.c);
  }
  free(n);
  return rf->other ? CXChildVisit_Break : CXChildVisit_Recurse;
}

static int resized_other_than_k(const ir_model *m, CXCursor decl)
{
  static const ir_method_id where[] = {IR_M_PRE_RUN, IR_M_INIT_BUFFERS};
  resize_find rf;
  rf.m = m;
  rf.decl = decl;
  rf.other = 0;
  for (size_t k = 0; k < sizeof where / sizeof *where && !rf.other; k++)
    if (m->has_method[where[k]])
      clang_visitChildren(m->methods[where[k]], visit_buffer_resize, &rf);
  return rf.other;
}

/* A member of Buffers_: input buffers become ring channels (or the queue of precise spikes); plain
   scalars and per-receptor vectors become fields (taking *member). */
static void add_buffers_member(ir_model *m, CXCursor c, char **member, CXType t, const char *dn)
{
  ir_type ty;
  /* Buffers_: input buffers become ring channels; plain scalars stay fields. */
  CXType ct = clang_getCanonicalType(t);
  if (!strcmp(dn, "RingBuffer")) {
    add_channel_groups(m, c, *member, IR_BUF_RING, 1);
  } else if (!strcmp(dn, "SliceRingBuffer")) {
    if (m->event_queue) {
      char *msg = xasprintf("a second SliceRingBuffer '%s' is not supported on the device (the runtime stages one "
                            "queue of precise spikes per neuron, '%s')",
                            *member, m->evq_member);
      add_diag_at(m, c, 1, msg);
      free(msg);
    } else {
      m->event_queue = 1;
      m->evq_member = xstrdup(*member);
      m->evq_decl = c;
    }
  } else if (!strcmp(dn, "MultiChannelInputBuffer")) {
    CXString sp = clang_getTypeSpelling(ct);
    const char *lt = strchr(clang_getCString(sp), '<');
    int count = lt ? atoi(lt + 1) : 0;
    clang_disposeString(sp);
    if (count <= 0) {
      char *msg = xasprintf("input buffer '%s' is not supported on the device (channel count unknown)", *member);
      add_diag_at(m, c, 1, msg);
      free(msg);
    } else {
      add_channel_groups(m, c, *member, IR_BUF_MULTI, count);
    }
  } else if (!strcmp(dn, "vector") && clang_Type_getNumTemplateArguments(ct) >= 1) {
    CXType et = clang_Type_getTemplateArgumentAsType(ct, 0);
    char *en = type_decl_name(et);
    if (!strcmp(en, "RingBuffer")) {
      add_channel_groups(m, c, *member, IR_BUF_VECTOR, -1);
    } else if (scalar_type(et, &ty) && resized_other_than_k(m, c)) {
      /* sized by something other than the receptor count (the gap-junction models' min_delay x
       * (wfr_interpolation_order + 1) interpolation coefficients): no SoA layout; a use on the
       * device path is refused where it occurs */
      char *note =
        xasprintf("field 'Buffers_::%s' stays on the host (resized to other than one element per receptor)", *member);
      ir_note_add(m, note);
      free(note);
    } else if (scalar_type(et, &ty)) {
      /* NESTML keeps per-receptor input sums of a step in Buffers_ */
      add_buffer_field(m, c, member, ty)->array_len = -1;
      m->has_receptors = 1;
    }
    free(en);
  } else if (scalar_type(t, &ty)) {
    add_buffer_field(m, c, member, ty);
  } else if (ct.kind == CXType_ConstantArray && clang_getArraySize(ct) > 0 &&
             scalar_type(clang_getArrayElementType(ct), &ty)) {
    /* a fixed array of per-step values (iaf_cond_alpha_mc's I_stim_[ NCOMP ]) */
    int len = (int)clang_getArraySize(ct);
    add_buffer_field(m, c, member, ty)->array_len = len;
  }
  /* Loggers and other host-side members stay on the host; a use of one in
   * update() is diagnosed there. */
}

/* A member of State_, Parameters_ or Variables_ (fw->si): a field if it has an SoA layout (taking member),
   else a note that it stays on the host. */
static void add_struct_member(const field_walk *fw, CXCursor c, char *member, CXType t, const char *dn)
{
  ir_model *m = fw->m;
  ir_type ty;
  ir_field *f;
  int len = 0, ok = 1;
  CXType ct = clang_getCanonicalType(t);
  if (ct.kind == CXType_ConstantArray) {
    len = (int)clang_getArraySize(ct);
    ok = scalar_type(clang_getArrayElementType(ct), &ty) && len > 0;
  } else if (!strcmp(dn, "vector") && clang_Type_getNumTemplateArguments(ct) >= 1) {
    len = -1;
    ok = scalar_type(clang_Type_getTemplateArgumentAsType(ct, 0), &ty);
  } else {
    ok = scalar_type(t, &ty);
  }
  if (!ok) {
    /* No SoA layout: the member stays in the NEST node; a use on the device
     * path is refused where it occurs. */
    CXString ts = clang_getTypeSpelling(type_as_declared(t));
    char *note = xasprintf("field '%s::%s' of type '%s' stays on the host (no SoA layout for this type)",
                           ir_struct_names[fw->si], member, clang_getCString(ts));
    clang_disposeString(ts);
    ir_note_add(m, note);
    free(note);
    free(member);
    return;
  }
  if (len == -1)
    m->has_receptors = 1;
  f = ir_add_field(m);
  f->member = member;
  f->struct_name = xstrdup(ir_struct_names[fw->si]);
  f->role = fw->si == 0 ? IR_ROLE_STATE : fw->si == 1 ? IR_ROLE_PARAMETER : IR_ROLE_INTERNAL;
  f->type = ty;
  f->array_len = len;
  f->decl = c;
}

static enum CXChildVisitResult visit_fields(CXCursor c, CXCursor parent, CXClientData data)
{
  field_walk *fw = data;
  CXType t;
  char *member, *dn;
  (void)parent;
  if (clang_getCursorKind(c) != CXCursor_FieldDecl)
    return CXChildVisit_Continue;
  member = cursor_spelling(c);
  t = clang_getCursorType(c);
  dn = type_decl_name(t);
  if (fw->si == 3) {
    add_buffers_member(fw->m, c, &member, t, dn);
    free(member);
  } else {
    add_struct_member(fw, c, member, t, dn);
  }
  free(dn);
  return CXChildVisit_Continue;
}

/* Enum constants of Buffers_ name the channels of a MultiChannelInputBuffer. */
typedef struct enum_names {
  char *names[64];
  int set[64];
} enum_names;

static enum CXChildVisitResult visit_enum_consts(CXCursor c, CXCursor parent, CXClientData data)
{
  enum_names *en = data;
  (void)parent;
  if (clang_getCursorKind(c) == CXCursor_EnumDecl)
    return CXChildVisit_Recurse;
  if (clang_getCursorKind(c) == CXCursor_EnumConstantDecl) {
    long long v = clang_getEnumConstantDeclValue(c);
    if (v >= 0 && v < 64 && !en->set[v]) {
      en->names[v] = cursor_spelling(c);
      en->set[v] = 1;
    }
  }
  return CXChildVisit_Continue;
}

static void add_channel_groups(ir_model *m, CXCursor decl, const char *member, ir_buffer_kind kind, int count)
{
  if (kind == IR_BUF_MULTI) {
    enum_names en;
    int k;
    memset(&en, 0, sizeof en);
    clang_visitChildren(m->structs[3], visit_enum_consts, &en);
    for (k = 0; k < count; k++) {
      ir_channel_group *g = ir_add_channel_group(m);
      g->buffer = xstrdup(member);
      g->name = (k < 64 && en.set[k]) ? xstrdup(en.names[k]) : xasprintf("%s%d", member, k);
      g->count = 1;
      g->kind = kind;
      g->decl = decl;
    }
    for (k = 0; k < 64; k++)
      free(en.names[k]);
  } else {
    ir_channel_group *g = ir_add_channel_group(m);
    g->buffer = xstrdup(member);
    g->name = xstrdup(member);
    g->count = count;
    g->kind = kind;
    g->decl = decl;
    if (count < 0)
      m->has_receptors = 1;
  }
}

typedef struct class_walk {
  ir_model *m;
} class_walk;

static int param_type_name_is(CXCursor fn, int arg, const char *name)
{
  CXCursor p = clang_Cursor_getArgument(fn, (unsigned)arg);
  CXType t = clang_getCursorType(p);
  char *n;
  int r;
  if (t.kind == CXType_LValueReference || t.kind == CXType_RValueReference)
    t = clang_getPointeeType(t);
  n = type_decl_name(t);
  r = !strcmp(n, name);
  free(n);
  return r;
}

static int same_decl(CXCursor a, CXCursor b)
{
  return !clang_Cursor_isNull(a) && !clang_Cursor_isNull(b) &&
    clang_equalCursors(clang_getCanonicalCursor(a), clang_getCanonicalCursor(b));
}

/* A synapse model's methods: its own (send, constructor, get/set_status) and its common properties'. */
static void note_syn_method(ir_model *m, CXCursor c)
{
  CXCursor parent = clang_getCursorSemanticParent(c);
  char *name = cursor_spelling(c);
  int nargs = clang_Cursor_getNumArguments(c);
  int id = -1;
  int ctor = clang_getCursorKind(c) == CXCursor_Constructor;
  if (same_decl(parent, m->cls)) {
    if (!strcmp(name, "send") && nargs == 3)
      id = IR_SM_SEND;
    else if (ctor && nargs == 0)
      id = IR_SM_CTOR;
    else if (!strcmp(name, "get_status") && nargs == 1)
      id = IR_SM_GET;
    else if (!strcmp(name, "set_status") && nargs == 2)
      id = IR_SM_SET;
  } else if (same_decl(parent, m->cp_cls)) {
    if (ctor && nargs == 0)
      id = IR_SM_CP_CTOR;
    else if (!strcmp(name, "get_status") && nargs == 1)
      id = IR_SM_CP_GET;
    else if (!strcmp(name, "set_status") && nargs == 2)
      id = IR_SM_CP_SET;
  }
  free(name);
  if (id >= 0 && !m->has_syn_method[id]) {
    m->syn_methods[id] = c;
    m->has_syn_method[id] = 1;
  }
}

/* Classifies a method or constructor definition of the model or its structs. */
static void note_method(ir_model *m, CXCursor c)
{
  if (m->kind == IR_KIND_SYNAPSE) {
    note_syn_method(m, c);
    return;
  }
  CXCursor parent = clang_getCanonicalCursor(clang_getCursorSemanticParent(c));
  char *name = cursor_spelling(c);
  int nargs = clang_Cursor_getNumArguments(c);
  int id = -1, si = -1, k;
  enum CXCursorKind kind = clang_getCursorKind(c);
  if (!strcmp(name, "create") && nargs == 0 && clang_Cursor_isNull(m->rec_create)) {
    /* template <> void RecordablesMap< model >::create(): NEST's recordables */
    CXString ps = clang_getTypeSpelling(clang_getCursorType(clang_getCursorSemanticParent(c)));
    const char *pt = clang_getCString(ps);
    char *want = xasprintf("RecordablesMap<nest::%s>", m->name);
    char *want2 = xasprintf("RecordablesMap<%s>", m->name);
    if (strstr(pt, want) || strstr(pt, want2))
      m->rec_create = c;
    free(want);
    free(want2);
    clang_disposeString(ps);
  }
  if (clang_equalCursors(parent, clang_getCanonicalCursor(m->cls))) {
    if (!strcmp(name, "update") && nargs == 3)
      id = IR_M_UPDATE;
    else if (!strcmp(name, "handle") && nargs == 1 && param_type_name_is(c, 0, "SpikeEvent"))
      id = IR_M_HANDLE_SPIKE;
    else if (!strcmp(name, "handle") && nargs == 1 && param_type_name_is(c, 0, "CurrentEvent"))
      id = IR_M_HANDLE_CURRENT;
    else if (!strcmp(name, "pre_run_hook") || !strcmp(name, "calibrate"))
      id = IR_M_PRE_RUN;
    else if (!strcmp(name, "init_buffers_") && nargs == 0)
      id = IR_M_INIT_BUFFERS;
    else if (!strcmp(name, "handle") && nargs == 1 && param_type_name_is(c, 0, "GapJunctionEvent") &&
             !m->gap_junctions) {
      m->gap_junctions = 1;
      m->gap_handler = c;
    }
  } else {
    for (k = 0; k < 3; k++)
      if (!clang_Cursor_isNull(m->structs[k]) && clang_equalCursors(parent, clang_getCanonicalCursor(m->structs[k])))
        si = k;
    if (si == 1 && kind == CXCursor_Constructor && nargs == 0)
      id = IR_M_PARAMS_CTOR;
    else if (si == 0 && kind == CXCursor_Constructor &&
             (nargs == 0 || (nargs == 1 && param_type_name_is(c, 0, "Parameters_"))))
      id = IR_M_STATE_CTOR;
    else if (si == 1 && !strcmp(name, "get"))
      id = IR_M_PARAMS_GET;
    else if (si == 0 && !strcmp(name, "get"))
      id = IR_M_STATE_GET;
    else if (si == 1 && !strcmp(name, "set"))
      id = IR_M_PARAMS_SET;
    else if (si == 0 && !strcmp(name, "set"))
      id = IR_M_STATE_SET;
  }
  free(name);
  if (id >= 0 && !m->has_method[id]) {
    m->methods[id] = c;
    m->has_method[id] = 1;
  }
}

static enum CXChildVisitResult visit_class(CXCursor c, CXCursor parent, CXClientData data)
{
  class_walk *cw = data;
  enum CXCursorKind kind = clang_getCursorKind(c);
  (void)parent;
  if ((kind == CXCursor_StructDecl || kind == CXCursor_ClassDecl) && clang_isCursorDefinition(c)) {
    char *n = cursor_spelling(c);
    int si = struct_index(n);
    free(n);
    if (si >= 0 && clang_Cursor_isNull(cw->m->structs[si])) {
      cw->m->structs[si] = c;
      return CXChildVisit_Recurse; /* inline constructors and getters */
    }
    return CXChildVisit_Continue;
  }
  if ((kind == CXCursor_CXXMethod || kind == CXCursor_Constructor) && clang_isCursorDefinition(c))
    note_method(cw->m, c);
  return CXChildVisit_Continue;
}

/* A member of a synapse class or of its common properties class: a field (scalar only). */
static void add_syn_field(ir_model *m, CXCursor c, const char *owner, ir_syn_role role)
{
  ir_type ty;
  char *member = cursor_spelling(c);
  if (!scalar_type(clang_getCursorType(c), &ty)) {
    char *tn = type_decl_name(clang_getCursorType(c));
    char *msg = xasprintf("member '%s::%s' of type '%s' is not supported on the device (only scalar members of a "
                          "synapse and its common properties map to the SoA layout)",
                          owner, member, *tn ? tn : "?");
    add_diag_at(m, c, 1, msg);
    free(msg);
    free(tn);
    free(member);
    return;
  }
  ir_field *f = ir_add_field(m);
  f->member = member;
  f->struct_name = xstrdup(owner);
  f->role = role == IR_SYN_COMMON ? IR_ROLE_PARAMETER : IR_ROLE_STATE;
  f->syn_role = role;
  f->type = ty;
  f->decl = c;
}

/* Whether the connection's test node accepts SpikeEvents: handles_test_event( SpikeEvent&, size_t ). */
static enum CXChildVisitResult visit_test_node(CXCursor c, CXCursor parent, CXClientData data)
{
  int *spikes = data;
  char *n = cursor_spelling(c);
  (void)parent;
  if (clang_getCursorKind(c) == CXCursor_CXXMethod && !strcmp(n, "handles_test_event") &&
      clang_Cursor_getNumArguments(c) == 2 && param_type_name_is(c, 0, "SpikeEvent"))
    *spikes = 1;
  free(n);
  return CXChildVisit_Continue;
}

/* The synapse class template: its fields, CommonPropertiesType and in-class methods. */
static enum CXChildVisitResult visit_syn_class(CXCursor c, CXCursor parent, CXClientData data)
{
  ir_model *m = data;
  enum CXCursorKind kind = clang_getCursorKind(c);
  (void)parent;
  if ((kind == CXCursor_ClassDecl || kind == CXCursor_StructDecl) && clang_isCursorDefinition(c)) {
    char *n = cursor_spelling(c);
    if (!strcmp(n, "ConnTestDummyNode"))
      clang_visitChildren(c, visit_test_node, &m->transmits_spikes);
    free(n);
  } else if (kind == CXCursor_FieldDecl) {
    add_syn_field(m, c, m->name, IR_SYN_STATE);
  } else if (kind == CXCursor_TypedefDecl || kind == CXCursor_TypeAliasDecl) {
    char *n = cursor_spelling(c);
    if (!strcmp(n, "CommonPropertiesType")) {
      CXType ut = clang_getTypedefDeclUnderlyingType(c);
      m->cp_cls = clang_getTypeDeclaration(clang_getCanonicalType(ut));
      m->cp_name = cursor_spelling(m->cp_cls);
    }
    free(n);
  } else if ((kind == CXCursor_CXXMethod || kind == CXCursor_Constructor) && clang_isCursorDefinition(c)) {
    note_syn_method(m, c);
  }
  return CXChildVisit_Continue;
}

static enum CXChildVisitResult visit_cp_fields(CXCursor c, CXCursor parent, CXClientData data)
{
  ir_model *m = data;
  (void)parent;
  if (clang_getCursorKind(c) == CXCursor_FieldDecl)
    add_syn_field(m, c, m->cp_name, IR_SYN_COMMON);
  else if ((clang_getCursorKind(c) == CXCursor_CXXMethod || clang_getCursorKind(c) == CXCursor_Constructor) &&
           clang_isCursorDefinition(c))
    note_syn_method(m, c);
  return CXChildVisit_Continue;
}

static enum CXChildVisitResult visit_top(CXCursor c, CXCursor parent, CXClientData data)
{
  walk *w = data;
  enum CXCursorKind kind = clang_getCursorKind(c);
  (void)parent;
  if (kind == CXCursor_MacroExpansion) {
    if (in_unit_files(w, c)) {
      ir_tu *t = &w->out->tu;
      CXFile f;
      unsigned b, e;
      if (!cursor_offsets(c, &f, &b, &e)) {
        t->macros = xrealloc(t->macros, sizeof *t->macros * (size_t)(t->n_macros + 1));
        t->macros[t->n_macros].file = f;
        t->macros[t->n_macros].begin = b;
        t->macros[t->n_macros].end = e;
        t->macros[t->n_macros].name = cursor_spelling(c);
        t->n_macros++;
      }
    }
    return CXChildVisit_Continue;
  }
  if (!in_unit_files(w, c))
    return CXChildVisit_Continue;
  if (kind == CXCursor_Namespace || kind == CXCursor_LinkageSpec)
    return CXChildVisit_Recurse;
  if ((kind == CXCursor_ClassDecl || kind == CXCursor_StructDecl) && clang_isCursorDefinition(c)) {
    char *base = NULL;
    CXCursor b = direct_node_base(c, &base);
    if (!clang_Cursor_isNull(b)) {
      char *name = cursor_spelling(c);
      ir_model *m = ir_model_new(name);
      class_walk cw;
      free(name);
      m->cls = c;
      m->tu = &w->out->tu;
      m->source_file = xstrdup(w->unit->source);
      m->header_file = w->unit->header ? xstrdup(w->unit->header) : NULL;
      cw.m = m;
      clang_visitChildren(c, visit_class, &cw);
      w->out->models = xrealloc(w->out->models, sizeof *w->out->models * (size_t)(w->out->n_models + 1));
      w->out->models[w->out->n_models++] = m;
    }
    free(base);
    return CXChildVisit_Continue;
  }
  if (kind == CXCursor_ClassTemplate && clang_isCursorDefinition(c) &&
      !clang_Cursor_isNull(direct_base(c, is_connection_base_name, NULL))) {
    char *name = cursor_spelling(c);
    ir_model *m = ir_model_new(name);
    free(name);
    m->kind = IR_KIND_SYNAPSE;
    m->cls = c;
    m->tu = &w->out->tu;
    m->source_file = xstrdup(w->unit->source);
    m->header_file = w->unit->header ? xstrdup(w->unit->header) : NULL;
    clang_visitChildren(c, visit_syn_class, m);
    m->n_syn_fields = m->n_fields;
    if (!clang_Cursor_isNull(m->cp_cls)) {
      char *cpn = cursor_spelling(m->cp_cls);
      /* NEST's CommonSynapseProperties itself carries nothing send() reads (weight recorder, volume transmitter) */
      if (strcmp(cpn, "CommonSynapseProperties"))
        clang_visitChildren(m->cp_cls, visit_cp_fields, m);
      free(cpn);
    }
    w->out->models = xrealloc(w->out->models, sizeof *w->out->models * (size_t)(w->out->n_models + 1));
    w->out->models[w->out->n_models++] = m;
    return CXChildVisit_Continue;
  }
  if (kind == CXCursor_ClassTemplate) {
    CXCursor b = direct_node_base(c, NULL);
    if (!clang_Cursor_isNull(b)) {
      char *name = cursor_spelling(c);
      ir_model *m = ir_model_new(name);
      char *msg = xasprintf(
        "class template '%s' is not supported on the device (a template model has no single instance to translate)",
        name);
      free(name);
      m->cls = c;
      m->tu = &w->out->tu;
      m->source_file = xstrdup(w->unit->source);
      m->header_file = w->unit->header ? xstrdup(w->unit->header) : NULL;
      add_diag_at(m, c, 1, msg);
      free(msg);
      w->out->models = xrealloc(w->out->models, sizeof *w->out->models * (size_t)(w->out->n_models + 1));
      w->out->models[w->out->n_models++] = m;
    }
    return CXChildVisit_Continue;
  }
  if ((kind == CXCursor_CXXMethod || kind == CXCursor_Constructor) && clang_isCursorDefinition(c)) {
    int k;
    for (k = 0; k < w->out->n_models; k++)
      note_method(w->out->models[k], c);
  }
  return CXChildVisit_Continue;
}

/* ---- per-model post-processing ---- */

static int strip_kind_is(CXCursor c, enum CXCursorKind k);

static int strip_kind_is(CXCursor c, enum CXCursorKind k)
{
  return clang_getCursorKind(cursor_strip(c)) == k;
}

/* NEST names from get(): `d[ names::X ] = member;` or `def< T >( d, names::X, member )`. */
typedef struct getter_walk {
  ir_model *m;
} getter_walk;

static void note_nest_name(ir_model *m, CXCursor key, CXCursor value)
{
  CXCursor k = cursor_strip(key), v = cursor_strip(value);
  int fi;
  if (clang_getCursorKind(v) != CXCursor_MemberRefExpr)
    return;
  fi = ir_find_field(m, clang_getCursorReferenced(v));
  if (fi < 0 || m->fields[fi].nest_name || m->fields[fi].array_len != 0)
    return;
  if (clang_getCursorKind(k) == CXCursor_DeclRefExpr) {
    char *q = cursor_qualified_name(clang_getCursorReferenced(k));
    if (!strncmp(q, "names::", 7))
      m->fields[fi].nest_name = xstrdup(q + 7);
    free(q);
  }
}

static enum CXChildVisitResult visit_getter(CXCursor c, CXCursor parent, CXClientData data)
{
  getter_walk *gw = data;
  (void)parent;
  if (clang_getCursorKind(c) == CXCursor_CallExpr) {
    char *n = cursor_spelling(c);
    cursor_kids l = cursor_children(c);
    if (!strcmp(n, "operator=") && l.n == 3) {
      /* d[ key ] = value: child 0 is the subscript call */
      CXCursor sub = cursor_strip(l.c[0]);
      char *sn = cursor_spelling(sub);
      if (!strcmp(sn, "operator[]")) {
        cursor_kids s2 = cursor_children(sub);
        if (s2.n == 3)
          note_nest_name(gw->m, s2.c[2], l.c[2]);
        free(s2.c);
      }
      free(sn);
    } else if (!strcmp(n, "def") && clang_Cursor_getNumArguments(c) == 3) {
      note_nest_name(gw->m, clang_Cursor_getArgument(c, 1), clang_Cursor_getArgument(c, 2));
    }
    free(l.c);
    free(n);
  }
  return CXChildVisit_Recurse;
}

/* Channels written by handle(CurrentEvent&) are current channels. */
static enum CXChildVisitResult visit_current_handler(CXCursor c, CXCursor parent, CXClientData data)
{
  ir_model *m = data;
  (void)parent;
  if (clang_getCursorKind(c) == CXCursor_CallExpr) {
    char *n = cursor_spelling(c);
    if (!strcmp(n, "add_value")) {
      cursor_kids l = cursor_children(c);
      if (l.n >= 1 && clang_getCursorKind(l.c[0]) == CXCursor_MemberRefExpr) {
        cursor_kids b = cursor_children(l.c[0]);
        if (b.n >= 1) {
          CXCursor base = cursor_strip(b.c[0]);
          if (clang_getCursorKind(base) == CXCursor_CallExpr) { /* B_.v_[k] */
            cursor_kids s = cursor_children(base);
            if (s.n >= 1)
              base = cursor_strip(s.c[0]);
            free(s.c);
          }
          if (clang_getCursorKind(base) == CXCursor_MemberRefExpr) {
            int gi = ir_find_channel_group(m, clang_getCursorReferenced(base));
            if (gi >= 0) {
              if (m->channels[gi].kind == IR_BUF_MULTI) {
                CXCursor ch = cursor_strip(clang_Cursor_getArgument(c, 1));
                CXCursor ref = clang_getCursorReferenced(ch);
                if (clang_getCursorKind(ref) == CXCursor_EnumConstantDecl) {
                  long long v = clang_getEnumConstantDeclValue(ref);
                  if (v >= 0 && gi + v < m->n_channels && !strcmp(m->channels[gi + v].buffer, m->channels[gi].buffer))
                    m->channels[gi + v].is_current = 1;
                }
              } else {
                m->channels[gi].is_current = 1;
              }
            }
          }
        }
        free(b.c);
      }
      free(l.c);
    }
    free(n);
  }
  return CXChildVisit_Recurse;
}

/*
 * An ODE model's GSL set-up in init_buffers_(): B_.sys_.function = f names the
 * dynamics, gsl_odeiv_step_alloc( type, n ) the stepper and
 * gsl_odeiv_control_*_new( ... ) the control (nestcl_rkf45.h reproduces
 * rkf45 with the standard controls).
 */
static enum CXChildVisitResult visit_ode_setup(CXCursor c, CXCursor parent, CXClientData data)
{
  ir_model *m = data;
  enum CXCursorKind k = clang_getCursorKind(c);
  (void)parent;
  if (k == CXCursor_CallExpr) {
    char *n = cursor_spelling(c);
    if (!strcmp(n, "gsl_odeiv_step_alloc") && clang_Cursor_isNull(m->ode_step))
      m->ode_step = c;
    else if (!strncmp(n, "gsl_odeiv_control_", 18) && strlen(n) > 22 && !strcmp(n + strlen(n) - 4, "_new") &&
             clang_Cursor_isNull(m->ode_control))
      m->ode_control = c;
    free(n);
  } else if (k == CXCursor_BinaryOperator) {
    cursor_kids ops = cursor_children(c);
    if (ops.n == 2 && clang_getCursorKind(cursor_strip(ops.c[0])) == CXCursor_MemberRefExpr) {
      CXCursor lhs = cursor_strip(ops.c[0]);
      char *mn = cursor_spelling(clang_getCursorReferenced(lhs));
      cursor_kids lk = cursor_children(lhs);
      char *owner = xstrdup("");
      if (lk.n >= 1) {
        CXString ts = clang_getTypeSpelling(clang_getCursorType(cursor_strip(lk.c[0])));
        free(owner);
        owner = xstrdup(clang_getCString(ts));
        clang_disposeString(ts);
      }
      free(lk.c);
      if (!strcmp(mn, "function") && strstr(owner, "gsl_odeiv_system")) {
        CXCursor fn = clang_getCursorReferenced(cursor_strip(ops.c[1]));
        m->has_ode = 1;
        m->ode_assign = c;
        if (clang_getCursorKind(fn) == CXCursor_FunctionDecl) {
          CXCursor def = clang_getCursorDefinition(fn);
          if (!clang_Cursor_isNull(def))
            m->ode_dyn = def;
        }
      }
      free(mn);
      free(owner);
    }
    free(ops.c);
  }
  return CXChildVisit_Recurse;
}


/*
 * An integer expression as a + b * K, K the receptor count: a constant (a
 * literal, a static const member), the size() of a per-receptor vector or a
 * getter that returns one (n_receptors()), and sums and products of these.
 */
static int linear_in_k(const ir_model *m, CXCursor e, long *a, long *b, int depth)
{
  e = cursor_strip(e);
  enum CXCursorKind k = clang_getCursorKind(e);
  if (depth > 8)
    return 0;
  if (k == CXCursor_IntegerLiteral || k == CXCursor_DeclRefExpr || k == CXCursor_MemberRefExpr) {
    CXEvalResult r = clang_Cursor_Evaluate(e);
    int ok = r && clang_EvalResult_getKind(r) == CXEval_Int;
    if (ok) {
      *a = (long)clang_EvalResult_getAsLongLong(r);
      *b = 0;
    }
    if (r)
      clang_EvalResult_dispose(r);
    return ok;
  }
  if (k == CXCursor_BinaryOperator) {
    enum CXBinaryOperatorKind op = clang_getCursorBinaryOperatorKind(e);
    cursor_kids ops = cursor_children(e);
    long a0, b0, a1, b1;
    int ok = ops.n == 2 && (op == CXBinaryOperator_Add || op == CXBinaryOperator_Mul) &&
      linear_in_k(m, ops.c[0], &a0, &b0, depth + 1) && linear_in_k(m, ops.c[1], &a1, &b1, depth + 1);
    free(ops.c);
    if (!ok || (op == CXBinaryOperator_Mul && b0 && b1))
      return 0;
    *a = op == CXBinaryOperator_Add ? a0 + a1 : a0 * a1;
    *b = op == CXBinaryOperator_Add ? b0 + b1 : a0 * b1 + b0 * a1;
    return 1;
  }
  if (k == CXCursor_CallExpr) {
    CXCursor callee = clang_getCursorReferenced(e);
    char *n = cursor_spelling(callee);
    int ok = 0;
    if (!strcmp(n, "size") && clang_Cursor_getNumArguments(e) == 0) {
      /* x.size(): the callee's base is the first child (a MemberRefExpr naming size) */
      cursor_kids ch = cursor_children(e);
      if (ch.n == 1 && clang_getCursorKind(cursor_strip(ch.c[0])) == CXCursor_MemberRefExpr) {
        cursor_kids base = cursor_children(cursor_strip(ch.c[0]));
        if (base.n == 1 && clang_getCursorKind(cursor_strip(base.c[0])) == CXCursor_MemberRefExpr) {
          int fi = ir_find_field((ir_model *)m, clang_getCursorReferenced(cursor_strip(base.c[0])));
          ok = fi >= 0 && m->fields[fi].array_len == -1 && m->fields[fi].array_base == 0 &&
            strcmp(m->fields[fi].struct_name, "Buffers_");
        }
        free(base.c);
      }
      free(ch.c);
      if (ok) {
        *a = 0;
        *b = 1;
      }
    } else if (clang_getCursorKind(callee) == CXCursor_CXXMethod && clang_Cursor_getNumArguments(e) == 0) {
      /* a getter whose body is `return expr;` */
      CXCursor def = clang_getCursorDefinition(callee);
      cursor_kids body = cursor_children(def);
      for (int j = 0; j < body.n && !ok; j++)
        if (clang_getCursorKind(body.c[j]) == CXCursor_CompoundStmt) {
          cursor_kids st = cursor_children(body.c[j]);
          if (st.n == 1 && clang_getCursorKind(st.c[0]) == CXCursor_ReturnStmt) {
            cursor_kids rk = cursor_children(st.c[0]);
            ok = rk.n == 1 && linear_in_k(m, rk.c[0], a, b, depth + 1);
            free(rk.c);
          }
          free(st.c);
        }
      free(body.c);
    }
    free(n);
    return ok;
  }
  return 0;
}

/* Whether e reads a local or a parameter of the function it is in (only fields and constants may travel). */
static enum CXChildVisitResult visit_reads_local(CXCursor x, CXCursor parent, CXClientData data)
{
  int *hit = data;
  (void)parent;
  if (clang_getCursorKind(x) == CXCursor_DeclRefExpr) {
    CXCursor d = clang_getCursorReferenced(x);
    enum CXCursorKind k = clang_getCursorKind(d);
    if (k == CXCursor_ParmDecl ||
        (k == CXCursor_VarDecl && clang_getCursorKind(clang_getCursorSemanticParent(d)) != CXCursor_StructDecl &&
         clang_getCursorKind(clang_getCursorSemanticParent(d)) != CXCursor_ClassDecl &&
         clang_getCursorKind(clang_getCursorSemanticParent(d)) != CXCursor_Namespace)) {
      *hit = 1;
      return CXChildVisit_Break;
    }
  }
  return CXChildVisit_Recurse;
}

/*
 * dist.param( p ) on a RandomDistribution member (pre_run_hook()): p's
 * constructor arguments, when they read only fields and constants, become
 * the member's parameters for draws in update() (ir_model.dists).
 */
static enum CXChildVisitResult visit_dist_param(CXCursor c, CXCursor parent, CXClientData data)
{
  ir_model *m = data;
  (void)parent;
  if (clang_getCursorKind(c) != CXCursor_CallExpr || clang_Cursor_getNumArguments(c) != 1)
    return CXChildVisit_Recurse;
  char *n = cursor_spelling(clang_getCursorReferenced(c));
  char *cls = cursor_spelling(clang_getCursorSemanticParent(clang_getCursorReferenced(c)));
  if (!strcmp(n, "param") && !strcmp(cls, "RandomDistribution")) {
    cursor_kids ch = cursor_children(c);
    CXCursor base = clang_getNullCursor();
    if (ch.n >= 1 && clang_getCursorKind(cursor_strip(ch.c[0])) == CXCursor_MemberRefExpr) {
      cursor_kids b = cursor_children(cursor_strip(ch.c[0]));
      if (b.n == 1)
        base = cursor_strip(b.c[0]);
      free(b.c);
    }
    free(ch.c);
    CXCursor p = cursor_strip(clang_Cursor_getArgument(c, 0));
    if (clang_getCursorKind(p) == CXCursor_DeclRefExpr) {
      /* a param_type local: its initialiser */
      cursor_kids vk = cursor_children(clang_getCursorReferenced(p));
      p = clang_getNullCursor();
      for (int j = 0; j < vk.n && clang_Cursor_isNull(p); j++)
        if (clang_getCursorKind(cursor_strip(vk.c[j])) == CXCursor_CallExpr)
          p = cursor_strip(vk.c[j]);
      free(vk.c);
    }
    if (!clang_Cursor_isNull(base) && clang_getCursorKind(base) == CXCursor_MemberRefExpr && !clang_Cursor_isNull(p) &&
        clang_getCursorKind(p) == CXCursor_CallExpr && clang_Cursor_getNumArguments(p) <= 2) {
      int hit = 0;
      clang_visitChildren(p, visit_reads_local, &hit);
      if (!hit) {
        m->dists = xrealloc(m->dists, sizeof *m->dists * (size_t)(m->n_dists + 1));
        m->dists[m->n_dists].member = clang_getCursorReferenced(base);
        m->dists[m->n_dists].nargs = clang_Cursor_getNumArguments(p);
        for (int k = 0; k < m->dists[m->n_dists].nargs; k++)
          m->dists[m->n_dists].args[k] = clang_Cursor_getArgument(p, (unsigned)k);
        m->n_dists++;
      }
    }
  }
  free(n);
  free(cls);
  return CXChildVisit_Recurse;
}

/*
 * y_.resize( A + B * n_receptors(), ... ) of a State_ vector of doubles (the
 * ODE state of a multi-receptor model): the field's length is A + B * K.
 */
static enum CXChildVisitResult visit_state_resize(CXCursor c, CXCursor parent, CXClientData data)
{
  ir_model *m = data;
  (void)parent;
  if (clang_getCursorKind(c) != CXCursor_CallExpr || clang_Cursor_getNumArguments(c) < 1)
    return CXChildVisit_Recurse;
  char *n = cursor_spelling(clang_getCursorReferenced(c));
  if (!strcmp(n, "resize")) {
    cursor_kids ch = cursor_children(c);
    if (ch.n >= 1 && clang_getCursorKind(cursor_strip(ch.c[0])) == CXCursor_MemberRefExpr) {
      cursor_kids base = cursor_children(cursor_strip(ch.c[0]));
      if (base.n == 1 && clang_getCursorKind(cursor_strip(base.c[0])) == CXCursor_MemberRefExpr) {
        int fi = ir_find_field(m, clang_getCursorReferenced(cursor_strip(base.c[0])));
        int gi = ir_find_channel_group(m, clang_getCursorReferenced(cursor_strip(base.c[0])));
        long a = 0, b = 0;
        int lin = gi >= 0 ? linear_in_k(m, clang_Cursor_getArgument(c, 0), &a, &b, 0) : 0;
        if (gi >= 0 && m->channels[gi].kind == IR_BUF_VECTOR && lin && b == 0 && a >= 1 && a <= 64 &&
            !m->channels[gi].resized_k && (m->channels[gi].count < 0 || m->channels[gi].count == a)) {
          /* iaf_bw_2001's spikes_.resize( 3 ): a fixed number of channels, one per synapse type */
          m->channels[gi].count = (int)a;
        } else if (gi >= 0 && m->channels[gi].kind == IR_BUF_VECTOR && lin && a == 0 && b == 1 &&
                   m->channels[gi].count < 0) {
          m->channels[gi].resized_k = 1;
        } else if (gi >= 0 && m->channels[gi].kind == IR_BUF_VECTOR) {
          /* iaf_cond_alpha_mc's spikes_.resize( 2 * NCOMP ): not one channel per receptor */
          char *msg = xasprintf("input buffer vector '%s' resized to other than one channel per receptor is not "
                                "supported on the device (the ring holds K channels for it)",
                                m->channels[gi].buffer);
          add_diag_at(m, c, 1, msg);
          free(msg);
        }
        if (fi >= 0 && m->fields[fi].role == IR_ROLE_STATE && m->fields[fi].type == IR_T_DOUBLE &&
            m->fields[fi].array_len == -1 && m->fields[fi].array_base == 0 &&
            linear_in_k(m, clang_Cursor_getArgument(c, 0), &a, &b, 0) && b > 0 && a >= 0 && (a > 0 || b > 1) &&
            a < 1024 && b < 1024) {
          m->fields[fi].array_len = -(int)b;
          m->fields[fi].array_base = (int)a;
        }
      }
      free(base.c);
    }
    free(ch.c);
  }
  free(n);
  return CXChildVisit_Recurse;
}

/* insert_( names::X, &model::getter ) and &model::get_y_elem_< model::State_::ELEM > in RecordablesMap::create(). */
typedef struct targ_find {
  CXCursor found;
} targ_find;

static enum CXChildVisitResult visit_targ(CXCursor c, CXCursor parent, CXClientData data)
{
  targ_find *tf = data;
  (void)parent;
  enum CXCursorKind k = clang_getCursorKind(c);
  if ((k == CXCursor_DeclRefExpr && clang_getCursorKind(clang_getCursorReferenced(c)) == CXCursor_EnumConstantDecl) ||
      k == CXCursor_IntegerLiteral) {
    tf->found = c;
    return CXChildVisit_Break;
  }
  return CXChildVisit_Recurse;
}

static enum CXChildVisitResult visit_rec_create(CXCursor c, CXCursor parent, CXClientData data)
{
  ir_model *m = data;
  (void)parent;
  if (clang_getCursorKind(c) != CXCursor_CallExpr)
    return CXChildVisit_Recurse;
  char *n = cursor_spelling(c);
  if (!strcmp(n, "insert_") && clang_Cursor_getNumArguments(c) == 2) {
    CXCursor key = cursor_strip(clang_Cursor_getArgument(c, 0));
    char *q = cursor_qualified_name(clang_getCursorReferenced(key));
    /* the getter: the DeclRefExpr under the address-of */
    CXCursor g = cursor_strip(clang_Cursor_getArgument(c, 1));
    cursor_kids gk = cursor_children(g);
    CXCursor ref = g;
    if (clang_getCursorKind(g) == CXCursor_UnaryOperator && gk.n == 1)
      ref = cursor_strip(gk.c[0]);
    free(gk.c);
    CXCursor getter = clang_getCursorReferenced(ref);
    if (!strncmp(q, "names::", 7) &&
        (clang_getCursorKind(getter) == CXCursor_CXXMethod ||
         clang_getCursorKind(getter) == CXCursor_FunctionTemplate)) {
      targ_find tf;
      tf.found = clang_getNullCursor();
      clang_visitChildren(ref, visit_targ, &tf);
      m->named = xrealloc(m->named, sizeof *m->named * (size_t)(m->n_named + 1));
      m->named[m->n_named].name = xstrdup(q + 7);
      m->named[m->n_named].getter = getter;
      m->named[m->n_named].targ = tf.found;
      m->named[m->n_named].at = c;
      m->n_named++;
    }
    free(q);
  }
  free(n);
  return CXChildVisit_Continue;
}

/*
 * update() whose body is one call of a non-virtual method of the model that
 * passes update()'s three parameters in order, then compile-time constants
 * (the gap-junction models' update_( origin, from, to, false ), whose fourth
 * parameter selects waveform relaxation): that method is the entry point, its
 * extra parameters bound to the constants, so the branches they decide fold
 * (rewrite_control.c). A non-constant extra argument is refused here.
 */
static void detect_update_forward(ir_model *m)
{
  CXCursor upd = m->methods[IR_M_UPDATE], body = clang_getNullCursor(), call, callee, def;
  cursor_kids ch = cursor_children(upd);
  int k, nargs, ok = 1;
  for (k = 0; k < ch.n; k++)
    if (clang_getCursorKind(ch.c[k]) == CXCursor_CompoundStmt)
      body = ch.c[k];
  free(ch.c);
  if (clang_Cursor_isNull(body))
    return;
  ch = cursor_children(body);
  call = ch.n == 1 ? cursor_strip(ch.c[0]) : clang_getNullCursor();
  free(ch.c);
  if (clang_Cursor_isNull(call) || clang_getCursorKind(call) != CXCursor_CallExpr)
    return;
  callee = clang_getCursorReferenced(call);
  nargs = clang_Cursor_getNumArguments(call);
  if (clang_getCursorKind(callee) != CXCursor_CXXMethod || clang_CXXMethod_isVirtual(callee) ||
      !clang_equalCursors(clang_getCanonicalCursor(clang_getCursorSemanticParent(callee)),
                          clang_getCanonicalCursor(m->cls)) ||
      nargs < 4 || nargs > 3 + (int)(sizeof m->bound_parm / sizeof *m->bound_parm))
    return;
  for (k = 0; k < 3 && ok; k++) {
    CXCursor a = cursor_strip(clang_Cursor_getArgument(call, (unsigned)k));
    ok = clang_getCursorKind(a) == CXCursor_DeclRefExpr &&
      clang_equalCursors(clang_getCanonicalCursor(clang_getCursorReferenced(a)),
                         clang_getCanonicalCursor(clang_Cursor_getArgument(upd, (unsigned)k)));
  }
  def = clang_getCursorDefinition(callee);
  if (!ok || clang_Cursor_isNull(def) || clang_Cursor_getNumArguments(def) != nargs)
    return;
  for (k = 3; k < nargs; k++) {
    CXCursor a = clang_Cursor_getArgument(call, (unsigned)k);
    CXEvalResult r = clang_Cursor_Evaluate(a);
    if (!r || clang_EvalResult_getKind(r) != CXEval_Int) {
      char *fn = cursor_spelling(callee);
      char *msg = xasprintf("argument %d of update()'s call to '%s' that is not a compile-time constant is not "
                            "supported on the device (only constant arguments select the path that runs)",
                            k + 1, fn);
      add_diag_at(m, a, 1, msg);
      free(msg);
      free(fn);
      if (r)
        clang_EvalResult_dispose(r);
      return;
    }
    m->bound_parm[k - 3] = clang_Cursor_getArgument(def, (unsigned)k);
    m->bound_value[k - 3] = clang_EvalResult_getAsLongLong(r);
    clang_EvalResult_dispose(r);
  }
  m->n_bound = nargs - 3;
  m->update_forward = upd;
  m->methods[IR_M_UPDATE] = def;
}

/* A call of ArchivingNode::get_spiketime_ms(). */
static enum CXChildVisitResult visit_find_spiketime(CXCursor c, CXCursor parent, CXClientData data)
{
  int *hit = data;
  (void)parent;
  if (clang_getCursorKind(c) == CXCursor_CallExpr) {
    CXCursor callee = clang_getCursorReferenced(c);
    char *n = cursor_spelling(callee);
    char *cls = cursor_spelling(clang_getCursorSemanticParent(callee));
    if (!strcmp(n, "get_spiketime_ms") && !strcmp(cls, "ArchivingNode"))
      *hit = 1;
    free(n);
    free(cls);
    if (*hit)
      return CXChildVisit_Break;
  }
  return CXChildVisit_Recurse;
}

/* A synapse: its fields reached through nestcl_self / nestcl_cp, and what the device needs of it. */
static void finish_synapse(ir_model *m)
{
  int k;
  /* The generated send() and host helpers reach fields through these two pointers. */
  for (k = 0; k < m->n_fields; k++)
    m->fields[k].c_name = xasprintf("%s->%s", k < m->n_syn_fields ? "nestcl_self" : "nestcl_cp", m->fields[k].member);
  if (!m->has_syn_method[IR_SM_SEND]) {
    char *msg = xasprintf("synapse '%s' is not supported on the device (no definition of send( Event&, size_t, "
                          "const CommonPropertiesType& ) in its files)",
                          m->name);
    add_diag_at(m, m->cls, 1, msg);
    free(msg);
  }
  if (!m->transmits_spikes) {
    char *msg = xasprintf("connection '%s' is not supported on the device (its ConnTestDummyNode does not take "
                          "SpikeEvents: it transmits another event type, and the device delivers spikes only)",
                          m->name);
    add_diag_at(m, m->cls, 1, msg);
    free(msg);
  }
  if (clang_Cursor_isNull(m->cp_cls)) {
    char *msg = xasprintf("synapse '%s' is not supported on the device (it declares no CommonPropertiesType)", m->name);
    add_diag_at(m, m->cls, 1, msg);
    free(msg);
  }
}

/* A neuron's fields: the members of its four structs, the last spike time if update() reads it, their C names. */
static void collect_fields(ir_model *m)
{
  int k;
  static const char *const prefix[4] = {"S__", "P__", "V__", "B__"};
  for (k = 0; k < 4; k++) {
    field_walk fw;
    if (clang_Cursor_isNull(m->structs[k]))
      continue;
    fw.m = m;
    fw.si = k;
    clang_visitChildren(m->structs[k], visit_fields, &fw);
  }
  /* update() reads the last spike time (ArchivingNode::get_spiketime_ms()): a field of its own after
   * the model's, which set_spiketime() writes in the kernel and the glue syncs with NEST's node */
  if (m->has_method[IR_M_UPDATE]) {
    int hit = 0;
    clang_visitChildren(m->methods[IR_M_UPDATE], visit_find_spiketime, &hit);
    if (hit) {
      ir_field *f = ir_add_field(m);
      f->member = xstrdup("last_spike_");
      f->struct_name = xstrdup("ArchivingNode");
      f->role = IR_ROLE_BUFFER;
      f->type = IR_T_DOUBLE;
      m->last_spike_field = m->n_fields - 1;
    }
  }
  for (k = 0; k < m->n_fields; k++) {
    int si = struct_index(m->fields[k].struct_name);
    m->fields[k].c_name =
      k == m->last_spike_field ? xstrdup("A__last_spike_") : xasprintf("%s%s", prefix[si], m->fields[k].member);
  }
}

/* Each channel group's first channel (base_fixed fixed ones, then base_k per-receptor ones); the number of
   per-receptor groups. */
static int channel_bases(ir_model *m)
{
  int k, fixed = 0, kk = 0;
  for (k = 0; k < m->n_channels; k++) {
    ir_channel_group *g = &m->channels[k];
    g->base_fixed = fixed;
    g->base_k = kk;
    if (g->count < 0)
      kk++;
    else
      fixed += g->count;
  }
  return kk;
}

/* What the model's methods tell about its fields and buffers: getters, the current handler, the
   recordables' map, the ODE set-up, distributions' parameters, and the vectors sized by K. */
static void scan_methods(ir_model *m)
{
  int k, kk;
  for (k = 0; k < 2; k++) {
    int id = k == 0 ? IR_M_PARAMS_GET : IR_M_STATE_GET;
    getter_walk gw;
    gw.m = m;
    if (m->has_method[id])
      clang_visitChildren(m->methods[id], visit_getter, &gw);
  }
  if (m->has_method[IR_M_HANDLE_CURRENT])
    clang_visitChildren(m->methods[IR_M_HANDLE_CURRENT], visit_current_handler, m);
  /* the set-up is in init_buffers_(), or in pre_run_hook() where the state vector's size depends on the receptors */
  if (!clang_Cursor_isNull(m->rec_create))
    clang_visitChildren(m->rec_create, visit_rec_create, m);
  if (m->has_method[IR_M_INIT_BUFFERS])
    clang_visitChildren(m->methods[IR_M_INIT_BUFFERS], visit_ode_setup, m);
  if (m->has_method[IR_M_PRE_RUN])
    clang_visitChildren(m->methods[IR_M_PRE_RUN], visit_ode_setup, m);
  if (m->has_method[IR_M_PRE_RUN])
    clang_visitChildren(m->methods[IR_M_PRE_RUN], visit_dist_param, m);
  /* an ODE state vector sized A + B * K where pre_run_hook(), init_buffers_() or State_::set() resize it;
   * input buffer vectors must be sized by K */
  {
    static const ir_method_id where[] = {IR_M_PRE_RUN, IR_M_INIT_BUFFERS, IR_M_STATE_SET, IR_M_STATE_CTOR};
    for (k = 0; k < (int)(sizeof where / sizeof *where); k++)
      if (m->has_method[where[k]])
        clang_visitChildren(m->methods[where[k]], visit_state_resize, m);
    /* a vector of input buffers resized to a constant holds that many channels: the bases again, and
     * receptors only where something still has one entry per receptor */
    kk = channel_bases(m);
    if (m->has_receptors) {
      int per_k = kk > 0;
      for (k = 0; k < m->n_fields && !per_k; k++)
        per_k = m->fields[k].array_len < 0;
      m->has_receptors = per_k;
    }
  }
}

static void finish_model(ir_model *m)
{
  int k;
  if (m->kind == IR_KIND_SYNAPSE) {
    finish_synapse(m);
    return;
  }
  if (clang_getCursorKind(m->cls) == CXCursor_ClassTemplate)
    return;
  collect_fields(m);
  channel_bases(m);
  scan_methods(m);
  /* Recordables: every State_ field in descriptor order (documented in model.h's
   * terms: rec holds what the model's state is, whatever its recordables map
   * derives from it on the host). */
  for (k = 0; k < m->n_fields; k++)
    if (m->fields[k].role == IR_ROLE_STATE) {
      m->recordables = xrealloc(m->recordables, sizeof(int) * (size_t)(m->n_recordables + 1));
      m->recordables[m->n_recordables++] = k;
    }
  if (!m->has_method[IR_M_UPDATE]) {
    char *msg =
      xasprintf("class '%s' is not supported on the device (it has no update(Time const&, long, long))", m->name);
    add_diag_at(m, m->cls, 1, msg);
    free(msg);
  } else {
    detect_update_forward(m);
  }
  (void)strip_kind_is;
}

void parse_note_nest_names(ir_model *m, CXCursor fn)
{
  getter_walk gw;
  gw.m = m;
  clang_visitChildren(fn, visit_getter, &gw);
}

/* FNV-1a 64 over the model's files: names the exact source a file came from. */
static void hash_files(const tr_unit *u, char out[17])
{
  uint64_t h = 1469598103934665603ULL;
  const char *files[2];
  int k;
  files[0] = u->header;
  files[1] = (u->header && !strcmp(u->header, u->source)) ? NULL : u->source;
  for (k = 0; k < 2; k++) {
    FILE *f;
    int ch;
    if (!files[k])
      continue;
    f = fopen(files[k], "rb");
    if (!f)
      continue;
    while ((ch = getc(f)) != EOF) {
      h ^= (unsigned char)ch;
      h *= 1099511628211ULL;
    }
    fclose(f);
  }
  snprintf(out, 17, "%016llx", (unsigned long long)h);
}

int parse_unit(CXIndex idx, const tr_unit *u, const char *const *args, int nargs, tr_parsed *out)
{
  enum CXErrorCode err;
  unsigned k, nd;
  walk w;
  strbuf errs;
  int had_error = 0;
  memset(out, 0, sizeof *out);
  err = clang_parseTranslationUnit2(idx, u->source, args, nargs, NULL, 0,
                                    CXTranslationUnit_DetailedPreprocessingRecord | CXTranslationUnit_KeepGoing,
                                    &out->tu.tu);
  if (err != CXError_Success || !out->tu.tu) {
    fprintf(stderr, "error: libclang could not parse %s (code %d)\n", u->source, (int)err);
    return -1;
  }
  memset(&w, 0, sizeof w);
  w.out = out;
  w.unit = u;
  w.files[w.n_files] = clang_getFile(out->tu.tu, u->source);
  if (w.files[w.n_files])
    w.n_files++;
  if (u->header && strcmp(u->header, u->source)) {
    w.files[w.n_files] = clang_getFile(out->tu.tu, u->header);
    if (w.files[w.n_files])
      w.n_files++;
  }
  clang_visitChildren(clang_getTranslationUnitCursor(out->tu.tu), visit_top, &w);

  /* Parse errors (a missing include among them) make every model of the unit CPU-only. */
  sb_init(&errs);
  nd = clang_getNumDiagnostics(out->tu.tu);
  for (k = 0; k < nd; k++) {
    CXDiagnostic d = clang_getDiagnostic(out->tu.tu, k);
    enum CXDiagnosticSeverity s = clang_getDiagnosticSeverity(d);
    if (s >= CXDiagnostic_Error) {
      CXString t = clang_formatDiagnostic(d, CXDiagnostic_DisplaySourceLocation | CXDiagnostic_DisplayColumn);
      int j;
      if (!out->n_models) {
        ir_model *m = ir_model_new(u->base);
        m->tu = &out->tu;
        m->source_file = xstrdup(u->source);
        m->header_file = u->header ? xstrdup(u->header) : NULL;
        out->models = xrealloc(out->models, sizeof *out->models);
        out->models[out->n_models++] = m;
      }
      for (j = 0; j < out->n_models; j++)
        ir_diag_add(out->models[j], 1, clang_getCString(t));
      clang_disposeString(t);
      had_error = 1;
    }
    clang_disposeDiagnostic(d);
  }
  sb_free(&errs);
  for (k = 0; k < (unsigned)out->n_models; k++) {
    ir_model *m = out->models[k];
    hash_files(u, m->source_hash);
    if (!had_error)
      finish_model(m);
  }
  return 0;
}

void parse_release_tu(tr_parsed *p)
{
  int k;
  for (k = 0; k < p->tu.n_macros; k++)
    free(p->tu.macros[k].name);
  free(p->tu.macros);
  p->tu.macros = NULL;
  p->tu.n_macros = 0;
  if (p->tu.tu)
    clang_disposeTranslationUnit(p->tu.tu);
  p->tu.tu = NULL;
}

void parse_free(tr_parsed *p)
{
  int k;
  parse_release_tu(p);
  for (k = 0; k < p->n_models; k++)
    ir_model_free(p->models[k]);
  free(p->models);
  memset(p, 0, sizeof *p);
}
