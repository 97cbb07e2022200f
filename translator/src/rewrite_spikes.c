/*
 * Rewriting, spike emission and recording: set_spiketime and
 * EventDeliveryManager::send as entries of the spike list (with their
 * multiplicity and offset), the spike history update() reads, the Clopath
 * history, and the logger's record_data.
 */
#include "rewrite_internal.h"

#include <stdlib.h>
#include <string.h>

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
int call_set_spiketime(rw_ctx *c, const call_info *ci, strbuf *out)
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

/* kernel().event_delivery_manager.send( *this, se, lag ): a spike into the spike list. */
int call_send(rw_ctx *c, const call_info *ci, strbuf *out)
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
int call_clopath_history(rw_ctx *c, const call_info *ci, strbuf *out)
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
int call_set_multiplicity(rw_ctx *c, const call_info *ci, strbuf *out)
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
int call_set_offset(rw_ctx *c, const call_info *ci, strbuf *out)
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
int call_get_spiketime(rw_ctx *c, const call_info *ci, strbuf *out)
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

/* B_.logger_.record_data( step ) */
int call_record_data(rw_ctx *c, const call_info *ci, strbuf *out)
{
  if (!name_is(ci, "record_data") || ci->nargs != 1)
    return 0;
  sb_puts(out, "NESTCL_RECORD(");
  render_arg(c, ci->cur, 0, out);
  sb_putc(out, ')');
  return 1;
}
