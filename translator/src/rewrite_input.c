/*
 * Rewriting, buffers and input: RingBuffer and SliceRingBuffer reads as
 * reads of the runtime's ring (nestcl_ring.h), and a handler's event and
 * add_value() as the channel and value it routes to.
 */
#include "rewrite_internal.h"

#include <stdlib.h>
#include <string.h>

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

/* B_.x_.get_value( lag ): read and clear the ring slot. */
int call_ring_get_value(rw_ctx *c, const call_info *ci, strbuf *out)
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
int call_ring_modulo(rw_ctx *c, const call_info *ci, strbuf *out)
{
  if (!name_is(ci, "get_modulo") || ci->nargs != 1)
    return 0;
  sb_puts(out, "nestcl_ring_slot(origin_steps, ");
  render_arg(c, ci->cur, 0, out);
  sb_puts(out, ", ring_slots)");
  return 1;
}

/* B_.buffer_.reset_values_all_channels( slot ) of a multi-channel input buffer. */
int call_ring_reset(rw_ctx *c, const call_info *ci, strbuf *out)
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
 * NEST's SliceRingBuffer (B_.events_ of the *_ps models), nestcl/model.h
 * event_queue: the runtime stages the events of each update in the order
 * NEST's queue hands them out, so prepare_delivery() (which sorts them) has
 * nothing left to do; get_next_spike() takes the next one (nestcl_evq_next,
 * nestcl_ring.h) over the kernel's locals nestcl_evq_* (translate.c, insert_event_locals);
 * add_refractory() sets the pseudo-event. handle( SpikeEvent& )'s add_spike()
 * is NEST's own (the glue reads the node's queue); init_buffers_()'s resize()
 * and clear() are the runtime's set-up (rw_is_runtime_setup).
 */
int call_slice_ring_buffer(rw_ctx *c, const call_info *ci, strbuf *out)
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
    sb_puts(out,
            "((nestcl_evq_r = nestcl_evq_next(evq_lag, evq_offset, evq_weight, &nestcl_evq_cur, nestcl_evq_end, "
            "origin_steps, ");
    render_arg(c, ci->cur, 0, out);
    sb_puts(out, ", ");
    render_arg(c, ci->cur, 1, out);
    sb_puts(out,
            ", &nestcl_evq_rstamp, nestcl_evq_roff, &nestcl_evq_off, &nestcl_evq_w, &nestcl_evq_eor)) ? ((void)((");
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
    error_at(c, ci->cur, what,
             "update() takes its events with prepare_delivery(), get_next_spike() and "
             "add_refractory() only");
    free(what);
  }
  return 1;
}

/*
 * A spike handler's e.get_offset(): the offset the routing function is given,
 * and a mark that this route read it (the runtime must then pass the spike's
 * own offset, or refuse the connection where it cannot).
 */
int call_get_offset(rw_ctx *c, const call_info *ci, strbuf *out)
{
  if (!name_is(ci, "get_offset") || ci->nargs != 0)
    return 0;
  c->m->reads_offset = 1;
  sb_puts(out, "(*nestcl_offset_read = 1, offset)");
  return 1;
}

/* spike_event_is_due( t ) (ignore_and_spike): the dynamic condition only. */
int call_spike_event_is_due(rw_ctx *c, const call_info *ci, strbuf *out)
{
  if (!name_is(ci, "spike_event_is_due") || ci->nargs != 1)
    return 0;
  warning_at(c, ci->cur,
             "spike_event_is_due(): the device path implements the dynamic spike condition only "
             "(neurons with ignore_and_spike must stay on the CPU)");
  sb_puts(out, "NESTCL_SPIKE_EVENT_IS_DUE(");
  render_arg(c, ci->cur, 0, out);
  sb_putc(out, ')');
  return 1;
}

/* A handler's B_.x_.add_value( slot, v ) (or ( slot, channel, v )): the channel and value it routes to. */
int call_route_add_value(rw_ctx *c, const call_info *ci, strbuf *out)
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
int call_event_getter(rw_ctx *c, const call_info *ci, strbuf *out)
{
  static const struct {
    const char *name, *text;
    unsigned modes;
  } getters[] = {
    {"get_weight", "weight", RW_ROUTES}, {"get_multiplicity", "1", RW_ROUTES},
    {"get_rport", "rport", RW_ROUTES},   {"get_current", "current", RW_BIT(RW_ROUTE_CURRENT)},
    {"get_delay_steps", "1", RW_ROUTES}, {"get_rel_delivery_steps", "0", RW_ROUTES},
    {"get_modulo", "0", RW_ROUTES},
  };
  for (size_t k = 0; k < sizeof getters / sizeof *getters; k++)
    if (name_is(ci, getters[k].name) && (getters[k].modes & RW_BIT(c->mode))) {
      sb_puts(out, getters[k].text);
      return 1;
    }
  return 0;
}

/* A handler's event used other than through its getters. */
int ref_route_event(rw_ctx *c, const node_info *ni, strbuf *out)
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
