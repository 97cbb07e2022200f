# cmake -DJSON=<results.json> -P check_persistent.cmake: the run's device loop
# ran persistent (simulation.persistent_groups >= 1, every whole super step in
# its launches), so that its oclgrind run checked the persistent loop, not the
# launched one it falls back to.
file(READ "${JSON}" doc)
string(JSON groups GET "${doc}" simulation persistent_groups)
string(JSON steps GET "${doc}" simulation enqueued persistent_steps)
string(JSON ss GET "${doc}" simulation enqueued super_steps)
if(groups LESS 1 OR steps LESS ss)
  message(FATAL_ERROR "check_persistent: ${JSON}: ${groups} work-groups, ${steps} of ${ss} super steps persistent")
endif()
message(STATUS "check_persistent: ${groups} work-groups, ${steps} super steps persistent")
