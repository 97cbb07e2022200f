/*
 * The run report of nestcl-translate: every model with its outcome
 * (translated or cpu-only), its diagnostics and the host helpers left out,
 * as JSON or as text.
 */
#ifndef NESTCL_TR_REPORT_H
#define NESTCL_TR_REPORT_H

#include "ir.h"
#include "strbuf.h"

void report_json(strbuf *b, ir_model *const *models, int n);
void report_text(strbuf *b, ir_model *const *models, int n);

#endif
