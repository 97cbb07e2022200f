/*
 * Report writers (see report.h). The JSON is written by hand with full
 * string escaping; models come sorted by name so reports are deterministic.
 */
#include "report.h"

#include <stdio.h>
#include <string.h>

static void json_str(strbuf *b, const char *s)
{
  sb_putc(b, '"');
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\')
      sb_printf(b, "\\%c", c);
    else if (c == '\n')
      sb_puts(b, "\\n");
    else if (c == '\t')
      sb_puts(b, "\\t");
    else if (c < 0x20)
      sb_printf(b, "\\u%04x", c);
    else
      sb_putc(b, (char)c);
  }
  sb_putc(b, '"');
}

void report_json(strbuf *b, ir_model *const *models, int n)
{
  int j, k, ok = 0;
  sb_puts(b, "{\n  \"tool\": \"nestcl-translate\",\n  \"version\": ");
  json_str(b, NESTCL_VERSION_STRING);
  sb_puts(b, ",\n  \"models\": [");
  for (j = 0; j < n; j++) {
    const ir_model *m = models[j];
    int errors = 0;
    if (!m->failed)
      ok++;
    sb_puts(b, j ? ",\n    {" : "\n    {");
    sb_puts(b, "\"name\": ");
    json_str(b, m->name);
    sb_printf(b, ", \"kind\": \"%s\"", m->kind == IR_KIND_SYNAPSE ? "synapse" : "neuron");
    sb_puts(b, ", \"source\": ");
    json_str(b, ir_input_name(m->source_file));
    sb_printf(b, ", \"status\": \"%s\"", m->failed ? "cpu-only" : "translated");
    if (!m->failed)
      sb_printf(b, ", \"fields\": %d, \"channel_groups\": %d", m->n_fields, m->n_channels);
    sb_puts(b, ", \"diagnostics\": [");
    for (k = 0; k < m->n_diags; k++) {
      /* an absolute path of the input goes, as in "source": the report names no path of this machine */
      const char *text = m->diags[k].text;
      const size_t dir = (size_t)(ir_input_name(m->source_file) - m->source_file);
      if (m->source_file[0] == '/' && dir && !strncmp(text, m->source_file, dir))
        text += dir;
      if (k)
        sb_puts(b, ", ");
      json_str(b, text);
      errors += m->diags[k].is_error;
    }
    sb_printf(b, "], \"errors\": %d, \"notes\": [", errors);
    for (k = 0; k < m->n_helper_notes; k++) {
      if (k)
        sb_puts(b, ", ");
      json_str(b, m->helper_notes[k]);
    }
    sb_puts(b, "]}");
  }
  sb_printf(b, "%s],\n  \"translated\": %d,\n  \"cpu_only\": %d\n}\n", n ? "\n  " : "", ok, n - ok);
}

void report_text(strbuf *b, ir_model *const *models, int n)
{
  int j, k, ok = 0;
  for (j = 0; j < n; j++) {
    const ir_model *m = models[j];
    const char *why = "";
    if (!m->failed)
      ok++;
    for (k = 0; k < m->n_diags && m->failed; k++)
      if (m->diags[k].is_error) {
        why = m->diags[k].text;
        break;
      }
    sb_printf(b, "%-40s %-10s %s\n", m->name, m->failed ? "cpu-only" : "translated", why);
    for (k = 0; k < m->n_helper_notes; k++)
      sb_printf(b, "%-40s note: %s\n", "", m->helper_notes[k]);
  }
  sb_printf(b, "%d translated, %d cpu-only\n", ok, n - ok);
}
