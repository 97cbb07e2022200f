# cmake -DJSON=<results.json> -P check_thalamic.cmake
#
# The microcircuit's thalamic input (--thalamic): 902 parrot_neurons repeat a
# 120 Hz Poisson train each from 700 to 710 ms. Over a run that covers the
# window, the thalamic population's spikes (all spikes minus the recorded
# cortex's) must be the generator's, 902 x 120 Hz x 10 ms = 1082.4 in
# expectation, within 4 standard deviations (sqrt(1082.4) = 32.9): [951, 1214].
# A parrot that dropped or invented spikes, or a window off by a step, falls out.
if(NOT EXISTS "${JSON}")
  message(FATAL_ERROR "check_thalamic: no file '${JSON}'")
endif()
file(READ "${JSON}" doc)
string(JSON all GET "${doc}" activity spikes)
string(JSON recorded GET "${doc}" activity recorded_spikes)
string(JSON on GET "${doc}" network thalamic_input)
if(NOT on EQUAL 1)
  message(FATAL_ERROR "check_thalamic: the run had no thalamic input (network.thalamic_input ${on})")
endif()
math(EXPR tc "${all} - ${recorded}")
if(tc LESS 951 OR tc GREATER 1214)
  message(FATAL_ERROR "check_thalamic: ${tc} thalamic spikes, expected 1082 +- 131")
endif()
message(STATUS "check_thalamic: ${tc} thalamic spikes (expected 1082 +- 131)")
