/*
 * C++ glue emitter: <model>_glue.hpp packs one NEST node's P_, S_, V_ (and
 * scalar B_) fields into SoA slot i and back. The structs are private members
 * of the model; an explicit template instantiation may name private members,
 * so a friend function defined by that instantiation hands out the member
 * pointers, and NEST's headers need no change. The element loops cover the
 * node's own vector lengths (the population's K).
 */
#include "emit.h"

#include <stdlib.h>
#include <string.h>

static const char *const tags[4] = {"State_", "Parameters_", "Variables_", "Buffers_"};
static const char *const members[4] = {"S_", "P_", "V_", "B_"};

static const char *cxx_type(ir_type t)
{
  static const char *const n[] = {"double", "std::int64_t", "std::int32_t", "std::int32_t", "std::uint64_t",
                                  "std::uint32_t"};
  return n[t];
}

static void copy_fields(strbuf *b, const ir_model *m, int pack)
{
  int j, s;
  for (s = 0; s < 4; s++) {
    int any = 0;
    for (j = 0; j < m->n_fields; j++)
      if (!strcmp(m->fields[j].struct_name, tags[s]))
        any = 1;
    if (!any)
      continue;
    sb_printf(b, "  auto& %s = node.*%s_detail::member(%s_detail::%s_tag{});\n", members[s], m->name, m->name, members[s]);
    for (j = 0; j < m->n_fields; j++) {
      const ir_field *f = &m->fields[j];
      const char *ct = cxx_type(f->type);
      if (strcmp(f->struct_name, tags[s]))
        continue;
      if (f->array_len == 0) {
        if (pack)
          sb_printf(b, "  static_cast< %s* >( fields[ %d ] )[ i ] = static_cast< %s >( %s.%s );\n", ct, j, ct, members[s], f->member);
        else
          sb_printf(b, "  %s.%s = static_cast< decltype( %s.%s ) >( static_cast< %s* >( fields[ %d ] )[ i ] );\n",
                    members[s], f->member, members[s], f->member, ct, j);
      } else {
        char *len = f->array_len > 0 ? xasprintf("%d", f->array_len) : xasprintf("%s.%s.size()", members[s], f->member);
        if (pack)
          sb_printf(b, "  for ( std::size_t k = 0; k < %s; ++k )\n    static_cast< %s* >( fields[ %d ] )[ k * n + i ] = static_cast< %s >( %s.%s[ k ] );\n",
                    len, ct, j, ct, members[s], f->member);
        else
          sb_printf(b, "  for ( std::size_t k = 0; k < %s; ++k )\n    %s.%s[ k ] = static_cast< std::decay_t< decltype( %s.%s[ k ] ) > >( static_cast< %s* >( fields[ %d ] )[ k * n + i ] );\n",
                    len, members[s], f->member, members[s], f->member, ct, j);
        free(len);
      }
    }
  }
}

void emit_glue(strbuf *b, const ir_model *m)
{
  const char *nm = m->name;
  const char *hdr = m->header_file ? m->header_file : m->source_file;
  const char *base = strrchr(hdr, '/');
  int s, j, any[4] = {0, 0, 0, 0};
  base = base ? base + 1 : hdr;
  emit_file_header(b, m, "C++ glue between a NEST node and SoA slot i.", "/*", "*/");
  sb_printf(b, "#ifndef NESTCL_GLUE_%s_HPP\n#define NESTCL_GLUE_%s_HPP\n\n", nm, nm);
  sb_printf(b, "#include <cstddef>\n#include <cstdint>\n#include <type_traits>\n\n#include \"%s\"\n\n", base);
  sb_printf(b, "namespace nestcl_glue\n{\nnamespace %s_detail\n{\n", nm);
  /* Only the structs the model has fields in get a tag and an accessor. */
  for (s = 0; s < 4; s++)
    for (j = 0; j < m->n_fields; j++)
      if (!strcmp(m->fields[j].struct_name, tags[s]))
        any[s] = 1;
  for (s = 0; s < 4; s++)
    if (any[s])
      sb_printf(b, "struct %s_tag\n{\n};\nauto member( %s_tag );\n", members[s], members[s]);
  sb_puts(b, "template < typename Tag, auto Member >\nstruct steal\n{\n  friend auto\n  member( Tag )\n  {\n    return Member;\n  }\n};\n");
  for (s = 0; s < 4; s++)
    if (any[s])
      sb_printf(b, "template struct steal< %s_tag, &nest::%s::%s >;\n", members[s], nm, members[s]);
  sb_printf(b, "} // namespace %s_detail\n\n", nm);
  sb_printf(b, "inline void\npack_%s( const nest::%s& node, void* const* fields, std::size_t n, std::size_t i )\n{\n  (void)n;\n", nm, nm);
  copy_fields(b, m, 1);
  sb_puts(b, "}\n\n");
  sb_printf(b, "inline void\nunpack_%s( nest::%s& node, void* const* fields, std::size_t n, std::size_t i )\n{\n  (void)n;\n", nm, nm);
  copy_fields(b, m, 0);
  sb_puts(b, "}\n} // namespace nestcl_glue\n\n#endif\n");
}
