/*
 * Renders a checked model (see emit.h). update() and the two handlers are
 * required: an error there makes the model CPU-only. The host helpers
 * (constructors, pre_run_hook, get()) are optional: where one cannot be
 * translated its function pointer stays NULL and the report says why, since
 * with NEST present the runtime can run the original on the node and pack it.
 */
#include "emit.h"

#include "parse.h"
#include "rewrite.h"
#include "uargs.h"

#include <stdlib.h>
#include <string.h>

static char *render_body(ir_model *m, ir_method_id id, rw_mode mode, int fatal, unsigned char **used, int *transc)
{
  rw_ctx *c;
  CXCursor body;
  strbuf b;
  char *res = NULL;
  if (!m->has_method[id])
    return NULL;
  body = rw_body_of(m->methods[id]);
  if (clang_Cursor_isNull(body))
    return NULL;
  c = rw_new(m, mode, m->methods[id], fatal);
  sb_init(&b);
  if (mode == RW_PRERUN && m->has_ode) {
    /* An ODE model's pre_run_hook() (aeif_cond_alpha_multisynapse) also re-allocates GSL's
     * stepper for the state vector's size and sizes its input buffers: set-up the runtime does
     * itself (rw_is_runtime_setup), left out statement by statement as in init_buffers_(). */
    cursor_kids st = cursor_children(body);
    sb_puts(&b, "{\n");
    for (int j = 0; j < st.n; j++) {
      if (rw_is_runtime_setup(m, st.c[j]))
        continue;
      sb_puts(&b, "  ");
      rw_render(c, st.c[j], &b);
      enum CXCursorKind sk = clang_getCursorKind(st.c[j]);
      sb_puts(&b,
              sk == CXCursor_CompoundStmt || sk == CXCursor_IfStmt || sk == CXCursor_ForStmt || sk == CXCursor_WhileStmt
                ? "\n"
                : ";\n");
    }
    sb_puts(&b, "}\n");
    free(st.c);
  } else {
    rw_render(c, body, &b);
  }
  if (rw_errors(c)) {
    if (!fatal) {
      static const char *const what[IR_M_COUNT] = {
        "update",           "handle(SpikeEvent&)", "handle(CurrentEvent&)", "pre_run_hook", "Parameters_()", "State_()",
        "Parameters_::get", "State_::get",         "Parameters_::set",      "State_::set",  "init_buffers_"};
      char *note = xasprintf("%s not translated: %s", what[id], rw_first_error(c));
      ir_note_add(m, note);
      free(note);
    }
    sb_free(&b);
  } else {
    res = sb_take(&b);
    if (used) {
      *used = xcalloc((size_t)(m->n_fields ? m->n_fields : 1), 1);
      memcpy(*used, rw_used_fields(c), (size_t)m->n_fields);
    }
    if (transc)
      *transc = rw_used_transcendental(c);
  }
  rw_free(c);
  return res;
}

typedef struct list_find {
  CXCursor found;
} list_find;

static enum CXChildVisitResult visit_init_list(CXCursor c, CXCursor parent, CXClientData data)
{
  list_find *lf = data;
  (void)parent;
  if (clang_getCursorKind(c) == CXCursor_InitListExpr) {
    lf->found = c;
    return CXChildVisit_Break;
  }
  return CXChildVisit_Recurse;
}

static CXCursor find_init_list(CXCursor c)
{
  list_find lf;
  lf.found = clang_getNullCursor();
  if (clang_getCursorKind(c) == CXCursor_InitListExpr)
    return c;
  clang_visitChildren(c, visit_init_list, &lf);
  return lf.found;
}

/* Constructors: the member initialisers, then the body. */
int render_ctor_fn(ir_model *m, CXCursor fn, strbuf *out, unsigned char *used)
{
  cursor_kids k = cursor_children(fn);
  rw_ctx *c = rw_new(m, RW_DEFAULTS, fn, 0);
  int j, ok = 1;
  for (j = 0; j < k.n; j++) {
    enum CXCursorKind kind = clang_getCursorKind(k.c[j]);
    if (kind == CXCursor_MemberRef && j + 1 < k.n) {
      int fi = ir_find_field(m, clang_getCursorReferenced(k.c[j]));
      CXCursor init = k.c[j + 1];
      enum CXCursorKind ik = clang_getCursorKind(init);
      if (ik == CXCursor_MemberRef || ik == CXCursor_CompoundStmt)
        continue; /* value-initialised: already zero */
      j++;
      if (fi < 0)
        continue;
      used[fi] = 1;
      if (m->fields[fi].array_len < 0 && !ir_per_receptor(&m->fields[fi])) {
        continue; /* an ODE state vector: zeros, and the model sets its elements */
      } else if (m->fields[fi].array_len == -1) {
        /* vector( count, value ): every receptor gets value; other forms leave zeros. */
        cursor_kids ik2 = cursor_children(init);
        CXCursor call = init;
        while (clang_getCursorKind(call) != CXCursor_CallExpr && ik2.n == 1) {
          call = ik2.c[0];
          free(ik2.c);
          ik2 = cursor_children(call);
        }
        free(ik2.c);
        CXCursor list = find_init_list(init);
        if (!clang_Cursor_isNull(list)) {
          /* vector{ a, b, ... }: element k where the population has it */
          cursor_kids el = cursor_children(list);
          int e;
          for (e = 0; e < el.n; e++) {
            strbuf v;
            sb_init(&v);
            rw_render(c, el.c[e], &v);
            if (v.len)
              sb_printf(out, "  if (K > %d)\n    %s[(size_t)%d * n + nestcl_i] = %s;\n", e, m->fields[fi].c_name, e,
                        sb_str(&v));
            sb_free(&v);
          }
          free(el.c);
        } else if (clang_getCursorKind(call) == CXCursor_CallExpr && clang_Cursor_getNumArguments(call) >= 2) {
          strbuf v;
          sb_init(&v);
          rw_render(c, clang_Cursor_getArgument(call, 1), &v);
          if (v.len)
            sb_printf(
              out,
              "  for (uint32_t nestcl_k = 0; nestcl_k < K; ++nestcl_k)\n    %s[(size_t)nestcl_k * n + nestcl_i] = %s;\n",
              m->fields[fi].c_name, sb_str(&v));
          sb_free(&v);
        }
      } else if (m->fields[fi].array_len > 0) {
        continue; /* array initialisers other than value-initialisation are not mapped */
      } else {
        strbuf e;
        sb_init(&e);
        rw_render(c, init, &e);
        if (e.len)
          sb_printf(out, m->kind == IR_KIND_SYNAPSE ? "  %s = %s;\n" : "  %s[nestcl_i] = %s;\n", m->fields[fi].c_name,
                    sb_str(&e));
        sb_free(&e);
      }
    } else if (kind == CXCursor_CompoundStmt) {
      sb_puts(out, "  ");
      rw_render(c, k.c[j], out);
      sb_puts(out, "\n");
    }
  }
  free(k.c);
  for (j = 0; j < m->n_fields; j++)
    if (rw_used_fields(c)[j])
      used[j] = 1;
  if (rw_errors(c)) {
    char *note = xasprintf("set_defaults not translated: %s", rw_first_error(c));
    ir_note_add(m, note);
    free(note);
    ok = 0;
  }
  rw_free(c);
  return ok;
}

/* get(): `d[ names::X ] = expr;` and `def< T >( d, names::X, expr )` statements. */
void render_getter_fn(ir_model *m, CXCursor fn, strbuf *out, unsigned char *used)
{
  CXCursor body = rw_body_of(fn);
  cursor_kids st = cursor_children(body);
  int j;
  for (j = 0; j < st.n; j++) {
    CXCursor s = st.c[j];
    CXCursor key = clang_getNullCursor(), val = clang_getNullCursor();
    char *n = cursor_spelling(s);
    if (clang_getCursorKind(s) == CXCursor_CallExpr && !strcmp(n, "operator=")) {
      cursor_kids a = cursor_children(s);
      if (a.n == 3) {
        cursor_kids sub = cursor_children(a.c[0]);
        CXCursor sc = a.c[0];
        while (clang_getCursorKind(sc) == CXCursor_UnexposedExpr && sub.n == 1) {
          sc = sub.c[0];
          free(sub.c);
          sub = cursor_children(sc);
        }
        if (sub.n == 3) {
          key = sub.c[2];
          val = a.c[2];
        }
        free(sub.c);
      }
      free(a.c);
    } else if (clang_getCursorKind(s) == CXCursor_CallExpr && !strcmp(n, "def") &&
               clang_Cursor_getNumArguments(s) == 3) {
      key = clang_Cursor_getArgument(s, 1);
      val = clang_Cursor_getArgument(s, 2);
    }
    free(n);
    if (!clang_Cursor_isNull(key)) {
      CXType vt = clang_getCanonicalType(clang_getCursorType(val));
      CXCursor kr = clang_getCursorReferenced(key);
      char *q;
      while (clang_getCursorKind(kr) != CXCursor_VarDecl && clang_getCursorKind(key) == CXCursor_UnexposedExpr) {
        cursor_kids kk = cursor_children(key);
        if (kk.n != 1) {
          free(kk.c);
          break;
        }
        key = kk.c[0];
        free(kk.c);
        kr = clang_getCursorReferenced(key);
      }
      q = cursor_qualified_name(kr);
      if (!strncmp(q, "names::", 7) &&
          (vt.kind == CXType_Double || vt.kind == CXType_Long || vt.kind == CXType_Int || vt.kind == CXType_Bool ||
           vt.kind == CXType_ULong)) {
        rw_ctx *c = rw_new(m, RW_GET, fn, 0);
        strbuf e;
        int f;
        sb_init(&e);
        rw_render(c, val, &e);
        if (!rw_errors(c)) {
          sb_printf(out, "  if (!strcmp(name, \"%s\")) {\n    *value = (double)(%s);\n    return 0;\n  }\n", q + 7,
                    sb_str(&e));
          for (f = 0; f < m->n_fields; f++)
            if (rw_used_fields(c)[f])
              used[f] = 1;
        }
        sb_free(&e);
        rw_free(c);
      }
      free(q);
    }
  }
  free(st.c);
}

/*
 * set(): Parameters_::set, then State_::set, on local copies of the slot's
 * scalar fields (declared by emit_desc.c), so a rejected value changes nothing.
 */
static char *render_setter(ir_model *m)
{
  static const ir_method_id ids[2] = {IR_M_PARAMS_SET, IR_M_STATE_SET};
  static const char *const labels[2] = {"nestcl_params_done", "nestcl_state_done"};
  strbuf b;
  int k;
  sb_init(&b);
  for (k = 0; k < 2; k++) {
    rw_ctx *c;
    CXCursor body;
    if (!m->has_method[ids[k]])
      continue;
    body = rw_body_of(m->methods[ids[k]]);
    if (clang_Cursor_isNull(body))
      continue;
    c = rw_new(m, RW_SET, m->methods[ids[k]], 0);
    rw_set_return_label(c, labels[k]);
    sb_puts(&b, "  {\n    double nestcl_ret = 0.0;\n    ");
    rw_render(c, body, &b);
    sb_printf(&b, "\n  %s:\n    nestcl_shift = nestcl_ret;\n  }\n", labels[k]);
    if (rw_errors(c)) {
      char *note = xasprintf("set_status not translated: %s", rw_first_error(c));
      ir_note_add(m, note);
      free(note);
      rw_free(c);
      sb_free(&b);
      return NULL;
    }
    rw_free(c);
  }
  if (!b.len) {
    sb_free(&b);
    return NULL;
  }
  return sb_take(&b);
}

/*
 * init_buffers_(): the statements that give Buffers_ fields their start
 * values (B_.step_, B_.IntegrationStep_, B_.I_stim_), as host C for a new
 * neuron. What the runtime sets up itself (input buffers, the logger, the
 * spike history, the GSL objects that nestcl_rkf45.h replaces) is left out.
 * fatal: an ODE model needs it (B_.step_ bounds its integration loop).
 */
static char *render_init_buffers(ir_model *m, int fatal, unsigned char **used)
{
  CXCursor body;
  if (!m->has_method[IR_M_INIT_BUFFERS] || clang_Cursor_isNull(body = rw_body_of(m->methods[IR_M_INIT_BUFFERS])))
    return NULL;
  rw_ctx *c = rw_new(m, RW_INIT, m->methods[IR_M_INIT_BUFFERS], fatal);
  cursor_kids st = cursor_children(body);
  strbuf b;
  int j, n = 0;
  sb_init(&b);
  for (j = 0; j < st.n; j++) {
    if (rw_is_runtime_setup(m, st.c[j]))
      continue;
    sb_puts(&b, "  ");
    rw_render(c, st.c[j], &b);
    sb_puts(&b,
            clang_getCursorKind(st.c[j]) == CXCursor_CompoundStmt || clang_getCursorKind(st.c[j]) == CXCursor_IfStmt ||
                clang_getCursorKind(st.c[j]) == CXCursor_ForStmt
              ? "\n"
              : ";\n");
    n++;
  }
  free(st.c);
  char *res = NULL;
  if (rw_errors(c)) {
    if (!fatal) {
      char *note = xasprintf("init_buffers_ not translated: %s", rw_first_error(c));
      ir_note_add(m, note);
      free(note);
    }
    sb_free(&b);
  } else if (n) {
    res = sb_take(&b);
    *used = xcalloc((size_t)(m->n_fields ? m->n_fields : 1), 1);
    memcpy(*used, rw_used_fields(c), (size_t)m->n_fields);
  } else {
    sb_free(&b);
  }
  rw_free(c);
  return res;
}

/* The portable element type of a field in generated code shared by C and OpenCL. */
static const char *portable_type(ir_type t)
{
  static const char *const names[] = {"double", "nestcl_i64", "nestcl_i32", "nestcl_i32", "nestcl_u64", "nestcl_u32"};
  return names[t];
}

/* Whether the model has an ODE state vector (ir_ode_field). */
static int ode_dim(const ir_model *m)
{
  return ir_ode_field(m) >= 0;
}

/* A parameter name of the dynamics, or fallback when it has none. */
static char *dyn_param_name(const ir_model *m, unsigned k, const char *fallback)
{
  char *n = cursor_spelling(clang_Cursor_getArgument(m->ode_dyn, k));
  if (!*n) {
    free(n);
    n = xstrdup(fallback);
  }
  return n;
}

void emit_ode(strbuf *b, const ir_model *m, const tr_rendered *r, int cl)
{
  const char *nm = m->name;
  int j;
  char *dim, *cap;
  if (!r->dyn_body)
    return;
  /* the state vector: the field update() passes to gsl_odeiv_evolve_apply; one of A + B K
   * elements has room for NESTCL_K_MAX receptors (the runtime builds the kernel with the
   * population's K; the C loop has room for 64 and refuses more) */
  {
    const ir_field *yf = &m->fields[ir_ode_field(m)];
    int a, k;
    ir_field_len(yf, &a, &k);
    if (k) {
      dim = xasprintf("(%d + %d * (int)ctx->K)", a, k);
      cap = xasprintf("(%d + %d * NESTCL_K_MAX)", a, k);
    } else {
      dim = xasprintf("%d", a);
      cap = xasprintf("%d", a);
    }
    if (k)
      sb_puts(b, "#ifndef NESTCL_K_MAX\n#define NESTCL_K_MAX 64 /* NESTCL_ODE_K_MAX of nestcl/model.h */\n#endif\n");
  }
  char *dn = cursor_spelling(m->ode_dyn);
  sb_printf(b,
            "/* ODE: %s integrates with GSL's rkf45 under a standard control; nestcl_rkf45.h does the\n"
            "   same operations. The dynamics %s() reads the neuron's fields from its context: the\n"
            "   parameters update() never writes by value, the rest through the SoA arrays. */\n",
            nm, dn);
  free(dn);
  if (cl)
    sb_puts(
      b,
      "#ifndef NESTCL_LIBM_VARIANT\n#error \"NESTCL_LIBM_VARIANT: build with -DNESTCL_LIBM_VARIANT=<0|1>, the host glibc's exp/pow variant\"\n#endif\n");
  else
    sb_puts(b, "#ifndef NESTCL_LIBM_VARIANT\n#define NESTCL_LIBM_VARIANT (nestcl_libm_host_variant() != 0)\n#endif\n");
  sb_printf(b, "typedef struct %s_nestcl_ode {\n  nestcl_u32 n, i, K;\n", nm);
  for (j = 0; j < m->n_fields; j++) {
    const ir_field *f = &m->fields[j];
    if (!r->dyn_used[j])
      continue;
    if (rw_dyn_by_value(f))
      sb_printf(b, "  %s %s;\n", portable_type(f->type), f->c_name);
    else
      sb_printf(b, "  NESTCL_GLOBAL %s *%s;\n", portable_type(f->type), f->c_name);
  }
  sb_printf(b, "} %s_nestcl_ode;\n\n", nm);
  {
    char *tn = dyn_param_name(m, 0, "nestcl_t"), *yn = dyn_param_name(m, 1, "nestcl_y"),
         *fn = dyn_param_name(m, 2, "nestcl_f");
    const char *brace = strchr(r->dyn_body, '{');
    sb_printf(b,
              "NESTCL_INLINE int %s_nestcl_dynamics(double %s, const double *%s, double *%s,\n"
              "                                   const %s_nestcl_ode *nestcl_ctx)\n",
              nm, tn, yn, fn, nm);
    if (brace) {
      sb_putn(b, r->dyn_body, (size_t)(brace - r->dyn_body + 1));
      sb_printf(b, "\n  (void)%s;\n  (void)%s;\n  (void)%s;\n  (void)nestcl_ctx;", tn, yn, fn);
      sb_puts(b, brace + 1);
    } else {
      sb_puts(b, r->dyn_body);
    }
    free(tn);
    free(yn);
    free(fn);
  }
  sb_printf(b, "\n\nNESTCL_RKF45_DEFINE(%s, %s, const %s_nestcl_ode *, %s_nestcl_dynamics)\n\n", nm, cap, nm, nm);
  sb_printf(
    b,
    "/* gsl_odeiv_evolve_apply on neuron i: its state vector from the SoA into private memory and back\n"
    "   (a vector longer than the room fails with GSL's EINVAL, reported as the model's solver failure). */\n"
    "NESTCL_INLINE int %s_nestcl_evolve(const %s_nestcl_ode *ctx, nestcl_rkf45_control ctl, double *t, double t1,\n"
    "                                 NESTCL_GLOBAL double *h, NESTCL_GLOBAL double *ysoa, nestcl_u32 n, nestcl_u32 i)\n"
    "{\n"
    "  double y[%s];\n"
    "  double hh = *h;\n"
    "  const int dim = %s;\n"
    "  if (dim > %s)\n"
    "    return NESTCL_RKF45_EINVAL;\n"
    "  for (int k = 0; k < dim; ++k)\n"
    "    y[k] = ysoa[(size_t)k * n + i];\n"
    "  const int s = %s_rkf45_evolve_apply(ctx, &ctl, 0, dim, t, t1, &hh, y);\n"
    "  for (int k = 0; k < dim; ++k)\n"
    "    ysoa[(size_t)k * n + i] = y[k];\n"
    "  *h = hh;\n"
    "  return s;\n"
    "}\n\n",
    nm, nm, cap, dim, cap, nm);
  free(dim);
  free(cap);
}

/* The dynamics' context for neuron nestcl_i, declared where update()'s body starts. */
static char *ode_context_init(const ir_model *m, const unsigned char *used)
{
  strbuf b;
  sb_init(&b);
  sb_printf(&b, "\n  %s_nestcl_ode nestcl_ode;\n  nestcl_ode.n = n;\n  nestcl_ode.i = nestcl_i;\n  nestcl_ode.K = K;\n",
            m->name);
  for (int j = 0; j < m->n_fields; j++) {
    const ir_field *f = &m->fields[j];
    if (!used[j])
      continue;
    if (rw_dyn_by_value(f))
      sb_printf(&b, "  nestcl_ode.%s = NESTCL_P_%s;\n", f->c_name, f->member);
    else
      sb_printf(&b, "  nestcl_ode.%s = %s;\n", f->c_name, f->c_name);
  }
  return sb_take(&b);
}

/* The dynamics callback of an ODE model (RW_DYN), fatal: without it update() has nothing to call. */
static void render_dynamics(ir_model *m, tr_rendered *r)
{
  CXCursor body = clang_Cursor_isNull(m->ode_dyn) ? m->ode_dyn : rw_body_of(m->ode_dyn);
  if (clang_Cursor_isNull(body) || clang_Cursor_getNumArguments(m->ode_dyn) != 4 || !ode_dim(m))
    return; /* update()'s gsl_odeiv_evolve_apply was refused with the reason */
  rw_ctx *c = rw_new(m, RW_DYN, m->ode_dyn, 1);
  strbuf d;
  sb_init(&d);
  rw_render(c, body, &d);
  if (rw_errors(c)) {
    sb_free(&d);
  } else {
    r->dyn_body = sb_take(&d);
    r->dyn_used = xcalloc((size_t)(m->n_fields ? m->n_fields : 1), 1);
    memcpy(r->dyn_used, rw_used_fields(c), (size_t)m->n_fields);
    /* the context goes where update()'s body opens */
    char *init = ode_context_init(m, r->dyn_used);
    const char *ub = r->update_body;
    const char *brace = strchr(ub, '{');
    if (brace) {
      strbuf u;
      sb_init(&u);
      sb_putn(&u, ub, (size_t)(brace - ub + 1));
      sb_puts(&u, init);
      sb_puts(&u, brace + 1);
      free(r->update_body);
      r->update_body = sb_take(&u);
    }
    free(init);
  }
  rw_free(c);
}

/* The expression of a getter whose body is `return expr;`, or a null cursor. */
static CXCursor getter_expr(CXCursor getter)
{
  CXCursor def = clang_getCursorDefinition(getter);
  CXCursor body = clang_Cursor_isNull(def) ? def : rw_body_of(def);
  CXCursor e = clang_getNullCursor();
  if (clang_Cursor_isNull(body))
    return e;
  cursor_kids st = cursor_children(body);
  if (st.n == 1 && clang_getCursorKind(st.c[0]) == CXCursor_ReturnStmt) {
    cursor_kids rk = cursor_children(st.c[st.n - 1]);
    if (rk.n == 1)
      e = rk.c[0];
    free(rk.c);
  }
  free(st.c);
  return e;
}

typedef struct rec_fields {
  ir_model *m;
} rec_fields;

/* A field a getter reads that update() changes and the record does not hold yet joins the record. */
static enum CXChildVisitResult visit_rec_fields(CXCursor c, CXCursor parent, CXClientData data)
{
  rec_fields *rf = data;
  ir_model *m = rf->m;
  (void)parent;
  if (clang_getCursorKind(c) == CXCursor_MemberRefExpr) {
    int fi = ir_find_field(m, clang_getCursorReferenced(c));
    int k, have = 0;
    if (fi < 0 || rw_dyn_by_value(&m->fields[fi]) || !m->fields[fi].written_in_update)
      return CXChildVisit_Recurse;
    for (k = 0; k < m->n_recordables; k++)
      if (m->recordables[k] == fi)
        have = 1;
    if (!have) {
      m->recordables = xrealloc(m->recordables, sizeof(int) * (size_t)(m->n_recordables + 1));
      m->recordables[m->n_recordables++] = fi;
    }
  }
  return CXChildVisit_Recurse;
}

/*
 * NEST's recordables: each getter of RecordablesMap< model >::create() as an
 * expression over what update() recorded at one lag (its State_ fields, and
 * the other fields it changes that a getter reads, which join the record) and
 * the parameters it never writes. V_m of iaf_psc_alpha is y3_ + E_L_;
 * get_y_elem_< State_::V_M > is y[ 0 ]. A getter that cannot be translated
 * leaves its name out, with a note.
 */
static void render_named_recordables(ir_model *m, tr_rendered *r)
{
  int k;
  rec_fields rf;
  rf.m = m;
  for (k = 0; k < m->n_named; k++) {
    CXCursor e = getter_expr(m->named[k].getter);
    if (clang_Cursor_isNull(e))
      continue;
    visit_rec_fields(e, clang_getNullCursor(), &rf);
    clang_visitChildren(e, visit_rec_fields, &rf);
  }
  if (!m->n_named) {
    /* No recordables map the translator reads (glif_cond's DynamicRecordablesMap reads B_.I_
     * through get_state_element): the scalar Buffers_ fields update() writes join the record,
     * so that NEST's logger, reading the node after the glue wrote the record back, sees them. */
    for (k = 0; k < m->n_fields; k++) {
      int have = 0;
      if (m->fields[k].role != IR_ROLE_BUFFER || m->fields[k].array_len != 0 || !m->fields[k].written_in_update)
        continue;
      for (int q = 0; q < m->n_recordables; q++)
        have |= m->recordables[q] == k;
      if (!have) {
        m->recordables = xrealloc(m->recordables, sizeof(int) * (size_t)(m->n_recordables + 1));
        m->recordables[m->n_recordables++] = k;
      }
    }
  }
  r->rec_used = xcalloc((size_t)(m->n_fields ? m->n_fields : 1), 1);
  for (k = 0; k < m->n_named; k++) {
    const ir_recordable *nr = &m->named[k];
    /* get_y_elem_< elem >: the template's own text, with elem bound below */
    CXCursor getter = nr->getter;
    if (clang_getCursorKind(getter) != CXCursor_FunctionTemplate) {
      CXCursor tmpl = clang_getSpecializedCursorTemplate(getter);
      if (clang_getCursorKind(tmpl) == CXCursor_FunctionTemplate)
        getter = tmpl;
    }
    CXCursor e = getter_expr(getter);
    if (clang_Cursor_isNull(e)) {
      char *note = xasprintf("recordable '%s' not translated: its getter is not a single return statement", nr->name);
      ir_note_add(m, note);
      free(note);
      continue;
    }
    CXCursor def = clang_getCursorDefinition(getter);
    rw_ctx *c = rw_new(m, RW_RECORD, def, 0);
    if (clang_getCursorKind(def) == CXCursor_FunctionTemplate) {
      /* template < State_::StateVecElems elem > get_y_elem_(): elem is the insert_'s argument */
      cursor_kids tk = cursor_children(def);
      int j, bound = 0;
      for (j = 0; j < tk.n; j++)
        if (clang_getCursorKind(tk.c[j]) == CXCursor_NonTypeTemplateParameter && !bound &&
            !clang_Cursor_isNull(nr->targ)) {
          strbuf v;
          sb_init(&v);
          rw_render(c, nr->targ, &v);
          rw_add_subst(c, tk.c[j], sb_str(&v));
          sb_free(&v);
          bound = 1;
        }
      free(tk.c);
    }
    strbuf v;
    sb_init(&v);
    rw_render(c, e, &v);
    if (rw_errors(c)) {
      char *note = xasprintf("recordable '%s' not translated: %s", nr->name, rw_first_error(c));
      ir_note_add(m, note);
      free(note);
      sb_free(&v);
    } else {
      int j;
      r->rec_names = xrealloc(r->rec_names, sizeof *r->rec_names * (size_t)(r->n_rec_names + 1));
      r->rec_exprs = xrealloc(r->rec_exprs, sizeof *r->rec_exprs * (size_t)(r->n_rec_names + 1));
      r->rec_names[r->n_rec_names] = xstrdup(nr->name);
      r->rec_exprs[r->n_rec_names] = sb_take(&v);
      r->n_rec_names++;
      for (j = 0; j < m->n_fields; j++)
        if (rw_used_fields(c)[j])
          r->rec_used[j] = 1;
    }
    rw_free(c);
  }
}

/*
 * The locals of update()'s event queue (nestcl_evq_next, nestcl_ring.h), where
 * its body opens: neuron nestcl_i's events of this call, the refractory
 * pseudo-event (none: NEST's marker, LONG_MAX) and get_next_spike()'s results.
 */
static void insert_event_locals(tr_rendered *r)
{
  const char *ub = r->update_body;
  const char *brace = strchr(ub, '{');
  if (!brace)
    return;
  strbuf u;
  sb_init(&u);
  sb_putn(&u, ub, (size_t)(brace - ub + 1));
  sb_puts(&u,
          "\n  /* SliceRingBuffer: this neuron's events of the call, in NEST's order (nestcl/model.h, event_queue) */\n"
          "  nestcl_u32 nestcl_evq_cur = evq_first[nestcl_i];\n"
          "  const nestcl_u32 nestcl_evq_end = evq_first[nestcl_i + 1];\n"
          "  nestcl_i64 nestcl_evq_rstamp = NESTCL_I64_MAX;\n"
          "  double nestcl_evq_roff = 0.0, nestcl_evq_off = 0.0, nestcl_evq_w = 0.0;\n"
          "  int nestcl_evq_r = 0, nestcl_evq_eor = 0;\n"
          "  (void)nestcl_evq_roff;\n  (void)nestcl_evq_r;\n");
  sb_puts(&u, brace + 1);
  free(r->update_body);
  r->update_body = sb_take(&u);
}

/* The portable spelling of a helper's parameter or return type, or NULL. */
static const char *helper_type(CXType t)
{
  if (t.kind == CXType_LValueReference)
    t = clang_getPointeeType(t);
  switch (clang_getCanonicalType(t).kind) {
  case CXType_Void:
    return "void";
  case CXType_Double:
    return "double";
  case CXType_Bool:
    return "bool";
  case CXType_Int:
    return "nestcl_i32";
  case CXType_UInt:
    return "nestcl_u32";
  case CXType_Long:
  case CXType_LongLong:
    return "nestcl_i64";
  case CXType_ULong:
  case CXType_ULongLong:
    return "nestcl_u64";
  default:
    return NULL;
  }
}

/*
 * update()'s helpers (rewrite_calls.c, call_neuron_helper): each method becomes a
 * function over the update's arguments and neuron (NESTCL_SELF_PARAMS), the
 * lag of its call, and its own parameters but the Time ones (update()'s
 * origin: origin_steps). Rendering one may add more (a helper's helpers).
 */
static void render_helpers(ir_model *m, tr_rendered *r)
{
  for (int k = 0; k < m->n_helpers && !m->failed; k++) {
    CXCursor def = m->helpers[k];
    CXType ft = clang_getCursorType(def);
    const char *rt = helper_type(clang_getResultType(ft));
    strbuf sig, b;
    char *where = cursor_where(def), *mn = cursor_spelling(def);
    sb_init(&sig);
    if (!rt) {
      char *t = xasprintf("%s: error: helper '%s' of update() is not supported on the device (its return type is "
                          "not a scalar)",
                          where, mn);
      ir_diag_add(m, 1, t);
      free(t);
    }
    sb_printf(&sig, "NESTCL_INLINE %s ", rt ? rt : "void");
    rw_helper_name(m, def, &sig);
    sb_puts(&sig, "(NESTCL_SELF_PARAMS, const nestcl_i64 nestcl_lag");
    for (int a = 0; a < clang_Cursor_getNumArguments(def); a++) {
      CXCursor p = clang_Cursor_getArgument(def, (unsigned)a);
      CXType pt = clang_getCursorType(p);
      const char *ty = helper_type(pt);
      char *pn = cursor_spelling(p);
      if (rw_is_time_type(pt)) {
        free(pn);
        continue;
      }
      if (!ty || !strcmp(ty, "void") || !*pn) {
        char *t = xasprintf("%s: error: helper '%s' of update() is not supported on the device (parameter %d is "
                            "not a named scalar)",
                            where, mn, a + 1);
        ir_diag_add(m, 1, t);
        free(t);
      }
      sb_printf(&sig, ", const %s %s", ty ? ty : "double", pn);
      free(pn);
    }
    sb_putc(&sig, ')');
    free(where);
    free(mn);
    rw_ctx *c = rw_new(m, RW_UPDATE, def, 1);
    rw_set_helper(c);
    sb_init(&b);
    sb_printf(&b, "%s\n", sig.s);
    rw_render(c, rw_body_of(def), &b);
    rw_free(c);
    r->helpers = xrealloc(r->helpers, sizeof *r->helpers * (size_t)(r->n_helpers + 1));
    r->helper_protos = xrealloc(r->helper_protos, sizeof *r->helper_protos * (size_t)(r->n_helpers + 1));
    r->helpers[r->n_helpers] = sb_take(&b);
    r->helper_protos[r->n_helpers] = sb_take(&sig);
    r->n_helpers++;
  }
}

/* NESTCL_SELF_PARAMS / _ARGS: what a helper sees of the update (model.h's fixed arguments, the fields, neuron nestcl_i). */
static void emit_self_macros(strbuf *b, const ir_model *m)
{
  static const char *const portable[] = {"double",     "nestcl_i64", "nestcl_i32",
                                         "nestcl_i32", "nestcl_u64", "nestcl_u32"};
  /* where the two macros' lines end: the fixed arguments come from nestcl/update_args.h, the layout is this text's */
  static const int params_breaks[] = {NESTCL_UARG_origin_steps, NESTCL_UARG_ring_slots, NESTCL_UARG_spike_count,
                                      NESTCL_UARG_rec_interval, -1};
  static const int args_breaks[] = {NESTCL_UARG_ring, -1};
  int j;
  sb_puts(b, "#define NESTCL_SELF_PARAMS ");
  tr_uarg_list(b, TR_UARG_PORTABLE, ", ", ", \\\n  ", params_breaks);
  for (j = 0; j < m->n_fields; j++)
    sb_printf(b, ", \\\n  NESTCL_GLOBAL %s *%s", portable[m->fields[j].type], m->fields[j].c_name);
  if (m->spike_offsets)
    sb_puts(b, ", \\\n  NESTCL_GLOBAL double *spike_offsets");
  sb_puts(b, ", const nestcl_u32 nestcl_i\n");
  sb_puts(b, "#define NESTCL_SELF_ARGS ");
  tr_uarg_list(b, TR_UARG_NAME, ", ", ", \\\n  ", args_breaks);
  for (j = 0; j < m->n_fields; j++)
    sb_printf(b, ", %s", m->fields[j].c_name);
  if (m->spike_offsets)
    sb_puts(b, ", spike_offsets");
  sb_puts(b, ", nestcl_i\n");
}

/* nest::regula_falsi( *this, dt ) (libnestutil/regula_falsi.h): the same iteration over threshold_distance(). */
static void emit_regula_falsi(strbuf *b, const ir_model *m)
{
  strbuf td;
  sb_init(&td);
  rw_helper_name(m, m->regula_falsi, &td);
  const int code = ir_add_failure((ir_model *)m, "NumericalInstability");
  sb_printf(
    b,
    "/* nest::regula_falsi( *this, dt ): the root of %s() in [0, dt], NEST's iteration;\n"
    "   NEST's NumericalInstability is the model's failure %d. */\n"
    "NESTCL_INLINE double nestcl_h_%s_regula_falsi(NESTCL_SELF_PARAMS, const nestcl_i64 nestcl_lag, const double dt)\n{\n"
    "  double root;\n  double threshold_dist_root;\n  int last_threshold_sign = 0;\n"
    "  double a_k = 0.0;\n  double b_k = dt;\n"
    "  double threshold_dist_a_k = %s(NESTCL_SELF_ARGS, nestcl_lag, a_k);\n"
    "  double threshold_dist_b_k = %s(NESTCL_SELF_ARGS, nestcl_lag, b_k);\n"
    "  if (threshold_dist_a_k * threshold_dist_b_k > 0) {\n"
    "    nestcl_report_failure(spike_count, %du, nestcl_i, (nestcl_u32)nestcl_lag, 0);\n    return 0.0;\n  }\n"
    "  for (int iter = 0; iter < 500; ++iter) {\n"
    "    root = (a_k * threshold_dist_b_k - b_k * threshold_dist_a_k) / (threshold_dist_b_k - threshold_dist_a_k);\n"
    "    threshold_dist_root = %s(NESTCL_SELF_ARGS, nestcl_lag, root);\n"
    "    if (fabs(threshold_dist_root) < 1e-14)\n      return root;\n"
    "    if (threshold_dist_a_k * threshold_dist_root > 0.0) {\n"
    "      a_k = root;\n      threshold_dist_a_k = threshold_dist_root;\n"
    "      if (last_threshold_sign == 1)\n        threshold_dist_b_k /= 2;\n      last_threshold_sign = 1;\n"
    "    } else if (threshold_dist_b_k * threshold_dist_root > 0.0) {\n"
    "      b_k = root;\n      threshold_dist_b_k = threshold_dist_root;\n"
    "      if (last_threshold_sign == -1)\n        threshold_dist_a_k /= 2;\n      last_threshold_sign = -1;\n"
    "    } else {\n"
    "      nestcl_report_failure(spike_count, %du, nestcl_i, (nestcl_u32)nestcl_lag, 0);\n      return 0.0;\n    }\n"
    "  }\n"
    "  nestcl_report_failure(spike_count, %du, nestcl_i, (nestcl_u32)nestcl_lag, 0);\n  return 0.0;\n}\n\n",
    td.s, code, m->name, td.s, td.s, code, td.s, code, code);
  sb_free(&td);
}

void emit_helpers(strbuf *b, const ir_model *m, const tr_rendered *r)
{
  if (!r->n_helpers)
    return;
  sb_puts(b,
          "/* update()'s helpers: the model's methods it calls, each over the update's arguments and neuron\n"
          "   (NESTCL_SELF_PARAMS), the lag of its call (nestcl_lag) and its own parameters (a Time one is\n"
          "   update()'s origin). A failure in one is reported and the helper returns; the runtime stops the\n"
          "   run after the update. */\n");
  emit_self_macros(b, m);
  for (int k = 0; k < r->n_helpers; k++)
    sb_printf(b, "%s;\n", r->helper_protos[k]);
  if (!clang_Cursor_isNull(m->regula_falsi))
    emit_regula_falsi(b, m);
  for (int k = 0; k < r->n_helpers; k++) {
    const char *ret =
      strstr(r->helper_protos[k], "void ") == r->helper_protos[k] + strlen("NESTCL_INLINE ") ? "" : " 0";
    sb_printf(b, "#undef NESTCL_ABANDON_NEURON\n#define NESTCL_ABANDON_NEURON return%s\n", ret);
    sb_puts(b, r->helpers[k]);
    sb_puts(b, "\n#undef NESTCL_ABANDON_NEURON\n\n");
  }
}

int translate_model(ir_model *m, tr_rendered *r)
{
  memset(r, 0, sizeof *r);
  if (m->failed)
    return -1;
  r->update_body = render_body(m, IR_M_UPDATE, RW_UPDATE, 1, NULL, &r->update_transcendental);
  if (r->update_body && m->event_queue)
    insert_event_locals(r);
  if (r->update_body)
    render_helpers(m, r);
  /* a model with a SliceRingBuffer queues its spikes there in NEST's own handle(), whose queue the glue
   * reads: no ring channel takes a spike (emit_desc refuses them) */
  if (!m->event_queue)
    r->route_spike = render_body(m, IR_M_HANDLE_SPIKE, RW_ROUTE_SPIKE, 1, NULL, NULL);
  render_named_recordables(m, r);
  r->route_current = render_body(m, IR_M_HANDLE_CURRENT, RW_ROUTE_CURRENT, 1, NULL, NULL);
  if (m->has_ode && r->update_body && !m->failed)
    render_dynamics(m, r);
  if (m->has_method[IR_M_INIT_BUFFERS])
    r->init_body = render_init_buffers(m, m->has_ode, &r->init_used);
  if (m->has_ode && !m->failed && !r->init_body) {
    char *where = cursor_where(m->ode_assign);
    char *t = xasprintf("%s: error: ODE model '%s' is not supported on the device (init_buffers_() gives B_.step_ "
                        "and B_.IntegrationStep_ no start value the device can compute)",
                        where, m->name);
    ir_diag_add(m, 1, t);
    free(t);
    free(where);
  }
  if (m->failed)
    return -1;
  if (m->has_method[IR_M_PRE_RUN])
    r->prerun_body = render_body(m, IR_M_PRE_RUN, RW_PRERUN, 0, &r->prerun_used, NULL);
  else
    ir_note_add(m, "pre_run not translated: the model has no pre_run_hook()");
  {
    strbuf d;
    int ok = 1;
    sb_init(&d);
    r->defaults_used = xcalloc((size_t)(m->n_fields ? m->n_fields : 1), 1);
    if (m->has_method[IR_M_PARAMS_CTOR])
      ok &= render_ctor_fn(m, m->methods[IR_M_PARAMS_CTOR], &d, r->defaults_used);
    if (m->has_method[IR_M_STATE_CTOR])
      ok &= render_ctor_fn(m, m->methods[IR_M_STATE_CTOR], &d, r->defaults_used);
    if (ok)
      r->defaults_body = sb_take(&d);
    else
      sb_free(&d);
  }
  if (m->has_method[IR_M_PARAMS_GET] || m->has_method[IR_M_STATE_GET]) {
    strbuf g;
    sb_init(&g);
    r->get_used = xcalloc((size_t)(m->n_fields ? m->n_fields : 1), 1);
    if (m->has_method[IR_M_PARAMS_GET])
      render_getter_fn(m, m->methods[IR_M_PARAMS_GET], &g, r->get_used);
    if (m->has_method[IR_M_STATE_GET])
      render_getter_fn(m, m->methods[IR_M_STATE_GET], &g, r->get_used);
    r->get_status_body = sb_take(&g);
  }
  if (m->has_method[IR_M_PARAMS_SET] || m->has_method[IR_M_STATE_SET])
    r->set_status_body = render_setter(m);
  return 0;
}

void tr_rendered_free(tr_rendered *r)
{
  free(r->update_body);
  free(r->route_spike);
  free(r->route_current);
  free(r->prerun_body);
  free(r->prerun_used);
  free(r->defaults_body);
  free(r->defaults_used);
  free(r->get_status_body);
  free(r->get_used);
  free(r->set_status_body);
  free(r->init_body);
  free(r->init_used);
  free(r->dyn_body);
  free(r->dyn_used);
  for (int k = 0; k < r->n_rec_names; k++) {
    free(r->rec_names[k]);
    free(r->rec_exprs[k]);
  }
  free(r->rec_names);
  free(r->rec_exprs);
  free(r->rec_used);
  for (int k = 0; k < r->n_helpers; k++) {
    free(r->helpers[k]);
    free(r->helper_protos[k]);
  }
  free(r->helpers);
  free(r->helper_protos);
  memset(r, 0, sizeof *r);
}

void emit_file_header(strbuf *b, const ir_model *m, const char *what, const char *co, const char *cc)
{
  sb_printf(b, "%s Generated by nestcl-translate from %s", co, ir_input_name(m->source_file));
  if (m->header_file && strcmp(m->header_file, m->source_file))
    sb_printf(b, " and %s", ir_input_name(m->header_file));
  sb_printf(b, " (fnv1a64 %s). Do not edit.\n", m->source_hash);
  sb_printf(b, "   %s: %s %s\n", m->name, what, cc);
}

/* Number of recorded values per neuron and lag (NESTCL_N_REC). */
static void n_rec_expr(strbuf *b, const ir_model *m)
{
  int fixed = 0, kk = 0, j;
  for (j = 0; j < m->n_recordables; j++) {
    int a, k;
    ir_field_len(&m->fields[m->recordables[j]], &a, &k);
    fixed += a;
    kk += k;
  }
  if (kk)
    sb_printf(b, "(%d + %d * (size_t)K)", fixed, kk);
  else
    sb_printf(b, "%d", fixed);
}

/* Helpers and hooks every translated update shares (defined once per program text). */
static void emit_shared_hooks(strbuf *b)
{
  sb_puts(
    b,
    "#ifndef NESTCL_TRANSLATED_HELPERS\n"
    "#define NESTCL_TRANSLATED_HELPERS\n"
    "/* std::min / std::max with C++'s comparison order (fmin/fmax differ on NaN and -0). */\n"
    "NESTCL_INLINE double nestcl_min_d(double a, double b) { return b < a ? b : a; }\n"
    "NESTCL_INLINE double nestcl_max_d(double a, double b) { return a < b ? b : a; }\n"
    "NESTCL_INLINE nestcl_i64 nestcl_min_l(nestcl_i64 a, nestcl_i64 b) { return b < a ? b : a; }\n"
    "NESTCL_INLINE nestcl_i64 nestcl_max_l(nestcl_i64 a, nestcl_i64 b) { return a < b ? b : a; }\n"
    "/* NEST's Time( Time::ms( x ) ).get_steps(), as the host helper nestcl_ms_to_steps. */\n"
    "NESTCL_INLINE nestcl_i64 nestcl_time_ms_to_steps(double ms, double resolution_ms)\n"
    "{\n"
    "  const nestcl_i64 tics_per_step = (nestcl_i64)(resolution_ms * 1000.0 + 0.5);\n"
    "  const nestcl_i64 tics = (nestcl_i64)(ms * 1000.0 + 0.5);\n"
    "  return (tics + tics_per_step - 1) / tics_per_step;\n"
    "}\n"
    "/* MultiChannelInputBuffer::reset_values_all_channels(): the buffer's own channels only. */\n"
    "NESTCL_INLINE void nestcl_ring_zero_channels(NESTCL_GLOBAL nestcl_i64 *ring, nestcl_u32 n_channels, nestcl_u32 n,\n"
    "                                             nestcl_u32 slot, nestcl_u32 first, nestcl_u32 count, nestcl_u32 i)\n"
    "{\n"
    "  for (nestcl_u32 ch = first; ch < first + count; ++ch)\n"
    "    ring[nestcl_ring_index(n_channels, n, slot, ch, i)] = 0;\n"
    "}\n"
    "#endif\n"
    "/* Hooks the runtime may define before this text: spike-time bookkeeping and\n"
    "   NEST's ignore_and_spike mechanism (off on the device). */\n"
    "#ifndef NESTCL_SET_SPIKETIME\n"
    "#define NESTCL_SET_SPIKETIME(i, step) ((void)0)\n"
    "#endif\n"
    "#ifndef NESTCL_SET_SPIKETIME_OFFSET\n"
    "#define NESTCL_SET_SPIKETIME_OFFSET(i, step, offset) ((void)0)\n"
    "#endif\n"
    "#ifndef NESTCL_SPIKE_EVENT_IS_DUE\n"
    "#define NESTCL_SPIKE_EVENT_IS_DUE(x) (x)\n"
    "#endif\n"
    "/* Random draws of the model: uniform [0, 1) from Philox keyed by (seed, purpose + call\n"
    "   site) with counter (neuron id, step); the update's arguments rng_seed, id_first and\n"
    "   id_stride give the seed and the global ids, so the stream does not depend on the partition. */\n"
    "#ifndef NESTCL_MODEL_RNG_SEED\n"
    "#define NESTCL_MODEL_RNG_SEED rng_seed\n"
    "#endif\n"
    "#ifndef NESTCL_NEURON_ID\n"
    "#define NESTCL_NEURON_ID(i) (id_first + (nestcl_u64)(i) * id_stride)\n"
    "#endif\n"
    "#ifndef NESTCL_DRAND\n"
    "#define NESTCL_DRAND(i, step, site) \\\n"
    "  nestcl_rng_uniform(nestcl_rng_key(NESTCL_MODEL_RNG_SEED, NESTCL_RNG_PURPOSE_MODEL + (site)), \\\n"
    "                     nestcl_rng_counter(NESTCL_NEURON_ID(i), (nestcl_u64)(step)))\n"
    "#endif\n\n");
}

/* update() reads the last spike time: the hooks that keep it in its field. */
static void emit_last_spike_hooks(strbuf *b, const ir_model *m)
{
  if (m->last_spike_field >= 0)
    sb_printf(b,
              "/* update() reads the last spike time (ArchivingNode::get_spiketime_ms()): set_spiketime()\n"
              "   keeps it in %s as NEST's last_spike_, Time::step( step ).get_ms() (the step's tics,\n"
              "   1000 per ms, times the length of a tic). */\n"
              "#ifndef NESTCL_STEP_MS\n#define NESTCL_STEP_MS\n"
              "NESTCL_INLINE double nestcl_step_ms_of(nestcl_i64 step, double resolution_ms)\n{\n"
              "  const nestcl_i64 tics_per_step = (nestcl_i64)(resolution_ms * 1000.0 + 0.5);\n"
              "  return (1.0 / 1000.0) * (double)(step * tics_per_step);\n}\n#endif\n"
              "#undef NESTCL_SET_SPIKETIME\n"
              "#define NESTCL_SET_SPIKETIME(i, step) (%s[i] = nestcl_step_ms_of((step), resolution_ms))\n"
              "#undef NESTCL_SET_SPIKETIME_OFFSET\n"
              "#define NESTCL_SET_SPIKETIME_OFFSET(i, step, offset) \\\n"
              "  (%s[i] = nestcl_step_ms_of((step), resolution_ms) - (offset))\n\n",
              m->fields[m->last_spike_field].c_name, m->fields[m->last_spike_field].c_name,
              m->fields[m->last_spike_field].c_name);
}

/* The parameters' NESTCL_P_<member> (constant where -DNESTCL_CONST_<member> says so) and the ring channels' map. */
static void emit_param_consts(strbuf *b, const ir_model *m)
{
  int j;
  sb_puts(b, "/* Parameters: -DNESTCL_CONST_<member>=value turns a per-neuron read into a constant. */\n");
  for (j = 0; j < m->n_fields; j++) {
    const ir_field *f = &m->fields[j];
    if (f->role != IR_ROLE_PARAMETER || f->array_len != 0 || f->written_in_update)
      continue;
    static const char *const keep[] = {"f64", "i64", "i32", "i32", "u64", "u32"}; /* by ir_type */
    sb_printf(b,
              "#ifdef NESTCL_CONST_%s\n#define NESTCL_P_%s (nestcl_keep_%s(NESTCL_CONST_%s))\n#else\n"
              "#define NESTCL_P_%s (%s[nestcl_i])\n#endif\n",
              f->member, f->member, keep[f->type], f->member, f->member, f->c_name);
  }
  sb_puts(b, "\n/* Ring channels: ");
  for (j = 0; j < m->n_channels; j++) {
    char *be = ir_channel_base_expr(&m->channels[j]);
    sb_printf(b, "%s%s.%s = %s", j ? ", " : "", m->channels[j].buffer, m->channels[j].name, be);
    free(be);
  }
  sb_puts(b, " */\n\n");
}

/* NESTCL_RECORD(step): the logger's record_data over the recordable fields. */
static void emit_record_macro(strbuf *b, const ir_model *m)
{
  int j;
  sb_puts(b,
          "/* B_.logger_.record_data( step ): every recordable (the State_ fields, in descriptor\n"
          "   order) at rec[((lag - from) * NESTCL_N_REC + r) * n + i]. */\n#define NESTCL_N_REC ");
  n_rec_expr(b, m);
  sb_puts(b,
          "\n#define NESTCL_RECORD(step) \\\n  do { \\\n    const nestcl_i64 nestcl_step_ = (step); \\\n"
          "    if (rec_interval > 0 && (nestcl_step_ + 1) % rec_interval == 0) { \\\n"
          "      const size_t nestcl_row_ = (size_t)(nestcl_step_ - origin_steps - from) * NESTCL_N_REC; \\\n"
          "      size_t nestcl_r_ = 0; \\\n");
  for (j = 0; j < m->n_recordables; j++) {
    const ir_field *f = &m->fields[m->recordables[j]];
    if (f->array_len == 0)
      sb_printf(b, "      rec[(nestcl_row_ + nestcl_r_++) * n + nestcl_i] = (double)%s[nestcl_i]; \\\n", f->c_name);
    else if (f->array_len > 0)
      sb_printf(b,
                "      for (size_t nestcl_k_ = 0; nestcl_k_ < %d; ++nestcl_k_) \\\n"
                "        rec[(nestcl_row_ + nestcl_r_++) * n + nestcl_i] = (double)%s[nestcl_k_ * n + nestcl_i]; \\\n",
                f->array_len, f->c_name);
    else if (ir_per_receptor(f))
      sb_printf(b,
                "      for (size_t nestcl_k_ = 0; nestcl_k_ < K; ++nestcl_k_) \\\n"
                "        rec[(nestcl_row_ + nestcl_r_++) * n + nestcl_i] = (double)%s[nestcl_k_ * n + nestcl_i]; \\\n",
                f->c_name);
    else
      sb_printf(b,
                "      for (size_t nestcl_k_ = 0; nestcl_k_ < %d + %d * (size_t)K; ++nestcl_k_) \\\n"
                "        rec[(nestcl_row_ + nestcl_r_++) * n + nestcl_i] = (double)%s[nestcl_k_ * n + nestcl_i]; \\\n",
                f->array_base, -f->array_len, f->c_name);
  }
  sb_puts(b, "      (void)nestcl_r_; \\\n    } \\\n  } while (0)\n\n");
}

void emit_update_prelude(strbuf *b, const ir_model *m)
{
  emit_shared_hooks(b);
  emit_last_spike_hooks(b, m);
  emit_param_consts(b, m);
  emit_record_macro(b, m);
}

void emit_update_epilogue(strbuf *b, const ir_model *m)
{
  int j;
  sb_puts(b, "\n#undef NESTCL_RECORD\n#undef NESTCL_N_REC\n");
  if (m->last_spike_field >= 0)
    sb_puts(b,
            "#undef NESTCL_SET_SPIKETIME\n#define NESTCL_SET_SPIKETIME(i, step) ((void)0)\n"
            "#undef NESTCL_SET_SPIKETIME_OFFSET\n#define NESTCL_SET_SPIKETIME_OFFSET(i, step, offset) ((void)0)\n");
  for (j = 0; j < m->n_fields; j++) {
    const ir_field *f = &m->fields[j];
    if (f->role == IR_ROLE_PARAMETER && f->array_len == 0 && !f->written_in_update)
      sb_printf(b, "#undef NESTCL_P_%s\n", f->member);
  }
}
