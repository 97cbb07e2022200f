# Run by nestcl_translate_models() after the translator (cmake -P): the models
# the translator found (its JSON report) must be exactly the ones the
# configure-time scan of the headers listed, or the library would miss or
# expect generated files. -DREPORT=<report.json> "-DEXPECTED=a;b;c"
file(READ ${REPORT} report)
string(JSON n LENGTH "${report}" models)
set(found)
if(n GREATER 0)
  math(EXPR last "${n} - 1")
  foreach(k RANGE ${last})
    string(JSON name GET "${report}" models ${k} name)
    list(APPEND found ${name})
  endforeach()
endif()
list(SORT found)
set(expected ${EXPECTED})
list(SORT expected)
if(NOT found STREQUAL expected)
  message(FATAL_ERROR "nestcl_translate_models: the translator found the models [${found}] but configuring "
                      "found [${expected}]; write each model's class head on one line "
                      "('class <name> : public <Node base>') and re-run cmake")
endif()
