/*
 * Front end of nestcl-translate: parses one model unit (a .cpp with its .h, or
 * a lone .h) with libclang and builds the model IR of every model class it
 * defines: the structs, their fields and types, the input buffers and the
 * methods the emitters translate. Parse errors and unsupported field types
 * become diagnostics on the model (or on a placeholder model named after the
 * file when no class could be found).
 */
#ifndef NESTCL_TR_PARSE_H
#define NESTCL_TR_PARSE_H

#include "ir.h"

typedef struct tr_unit {
  char *base; /* model file name without directory and extension */
  char *source; /* the file libclang parses: the .cpp, else the .h */
  char *header; /* the .h or NULL */
} tr_unit;

typedef struct tr_parsed {
  ir_tu tu;
  ir_model **models;
  int n_models;
} tr_parsed;

/* 0, or -1 when libclang could not even start (run-time error, message on stderr). */
int parse_unit(CXIndex idx, const tr_unit *u, const char *const *args, int nargs, tr_parsed *out);
void parse_free(tr_parsed *p);
/* Disposes the translation unit but keeps the models for the report (their cursors become invalid). */
void parse_release_tu(tr_parsed *p);

/* NEST names of fields from a get()/get_status() body: `d[ names::X ] = member;`, `def( d, names::X, member )`. */
void parse_note_nest_names(ir_model *m, CXCursor fn);

/* Whether text declares a class deriving directly from a NEST node base (cheap pre-filter). */
int parse_text_declares_model(const char *text);

/* Shared cursor helpers (also used by rewrite*.c and check.c). */
char *cursor_spelling(CXCursor c);
char *cursor_qualified_name(CXCursor c); /* "nest::numerics::expm1" without "nest::" */
int cursor_offsets(CXCursor c, CXFile *file, unsigned *begin, unsigned *end);
/* "file:line:col" of the cursor's start, malloc'ed. */
char *cursor_where(CXCursor c);
int is_node_base_name(const char *name);

/* The direct children of a cursor, in source order; the caller frees .c. */
typedef struct cursor_kids {
  CXCursor *c;
  int n;
} cursor_kids;
cursor_kids cursor_children(CXCursor c);
/* Appends the direct children of c to k (a work list for a tree search). */
void cursor_append_children(cursor_kids *k, CXCursor c);
/* c without the implicit-conversion (UnexposedExpr) and parenthesis wrappers
 * that have exactly one child: the expression as written. */
CXCursor cursor_strip(CXCursor c);
/* Whether a DeclRefExpr anywhere below root (root itself excluded) refers to decl. */
int cursor_refers_to(CXCursor root, CXCursor decl);

#endif
