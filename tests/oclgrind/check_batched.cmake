# cmake -DJSON=<results.json> -P check_batched.cmake: the run delivered its
# plastic synapses in batches from host memory (plasticity.delivery "batched",
# plasticity.batches >= 2), so that its oclgrind run checked the batched
# delivery, not the resident one a larger budget gives.
file(READ "${JSON}" doc)
string(JSON delivery GET "${doc}" plasticity delivery)
string(JSON batches GET "${doc}" plasticity batches)
if(NOT delivery STREQUAL "batched" OR batches LESS 2)
  message(FATAL_ERROR "check_batched: ${JSON}: delivery '${delivery}', ${batches} batches")
endif()
message(STATUS "check_batched: ${batches} batches")
