# cmake -DA=<a.json> -DB=<b.json> -P compare_results.cmake
#
# Two runs of the same network on different paths (CPU threads vs OpenCL
# streams) must give the same activity: spike count, recorded spikes, mean
# rate and CV of ISI, and with STDP the final E->E weights, compared as exact
# text (the engine is bit-reproducible).
foreach(f A B)
  if(NOT EXISTS "${${f}}")
    message(FATAL_ERROR "compare_results: no file '${${f}}'")
  endif()
  file(READ "${${f}}" doc_${f})
endforeach()
foreach(key spikes recorded_spikes mean_rate_hz cv_isi synaptic_events)
  string(JSON a GET "${doc_A}" activity ${key})
  string(JSON b GET "${doc_B}" activity ${key})
  if(NOT a STREQUAL b)
    message(FATAL_ERROR "compare_results: activity.${key} differs: ${a} vs ${b}")
  endif()
endforeach()
# Plastic E->E: the final weights too (checksum of every (source, target, weight), exact mean and sd).
foreach(key ee_synapse ee_weight_checksum ee_weight_mean_pA ee_weight_sd_pA)
  string(JSON a ERROR_VARIABLE ea GET "${doc_A}" plasticity ${key})
  string(JSON b ERROR_VARIABLE eb GET "${doc_B}" plasticity ${key})
  if(NOT "${a}|${ea}" STREQUAL "${b}|${eb}")
    message(FATAL_ERROR "compare_results: plasticity.${key} differs: ${a}${ea} vs ${b}${eb}")
  endif()
endforeach()
# -DBATCHED=1: B must have run its plastic delivery in batches.
if(BATCHED)
  string(JSON d GET "${doc_B}" plasticity delivery)
  if(NOT d STREQUAL "batched")
    message(FATAL_ERROR "compare_results: ${B} delivered its plastic synapses '${d}', not batched")
  endif()
endif()
string(JSON a GET "${doc_A}" activity mean_rate_hz)
message(STATUS "compare_results: identical activity (mean rate ${a} Hz)")
