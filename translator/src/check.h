/*
 * Model-level checks of nestcl-translate, run on the IR before rendering:
 * which parameters update() writes (those cannot be specialised as build-time
 * constants), and locals using the nestcl_ prefix of the generated code. Construct-level refusals (unknown calls, new, throw, ...) are
 * issued by the rewriter where it meets them.
 */
#ifndef NESTCL_TR_CHECK_H
#define NESTCL_TR_CHECK_H

#include "ir.h"

void check_model(ir_model *m);
/* The same checks on one function: fields it writes get written_in_update. */
void check_function(ir_model *m, CXCursor fn);
/* Whether a binary operator is an assignment (=, +=, ...). */
int check_is_assignment(ir_model *m, CXCursor op);

#endif
