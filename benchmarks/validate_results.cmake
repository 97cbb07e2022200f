# cmake -DJSON=<results.json> [-DRATE_MIN=x -DRATE_MAX=y] -P validate_results.cmake
#
# Checks a results file of `nestcl run hpc_benchmark` against the schema of
# results.schema.md: every required key present with its JSON type, and the
# simple invariants between values (positive sizes, synapses = neurons x
# (CE + CI), per-VP phase objects with other_wait <= other). With RATE_MIN/RATE_MAX, also that the mean
# rate lies in that band. Fails (FATAL_ERROR) with the first problem found.
if(NOT JSON OR NOT EXISTS "${JSON}")
  message(FATAL_ERROR "validate_results: no such file '${JSON}'")
endif()
file(READ "${JSON}" doc)

# key path (dot separated) -> expected type (string(JSON TYPE) names)
set(required
  "schema:STRING" "benchmark:STRING"
  "config:OBJECT" "config.argv:ARRAY" "config.scale:NUMBER" "config.simtime_ms:NUMBER" "config.presim_ms:NUMBER"
  "config.resolution_ms:NUMBER" "config.delay_ms:NUMBER" "config.model:STRING" "config.threads:NUMBER"
  "config.streams:NUMBER" "config.gpu_fraction:NUMBER" "config.seed:NUMBER" "config.record:NUMBER"
  "config.weight_type:STRING" "config.mpi_ranks:NUMBER" "config.version:STRING"
  "network:OBJECT" "network.neurons:NUMBER" "network.NE:NUMBER" "network.NI:NUMBER" "network.CE:NUMBER"
  "network.CI:NUMBER" "network.synapses:NUMBER" "network.J_E_pA:NUMBER" "network.J_I_pA:NUMBER"
  "network.poisson_rate_hz:NUMBER" "network.min_delay_steps:NUMBER"
  "build_time_s:OBJECT" "build_time_s.nodes:NUMBER" "build_time_s.connections:NUMBER" "build_time_s.upload:NUMBER"
  "build_time_s.total:NUMBER" "build_time_s.draw:NUMBER" "build_time_s.csr:NUMBER" "build_time_s.threads:NUMBER"
  "build_time_s.drawn_on_device:NUMBER" "build_time_s.drawn_on_host:NUMBER" "build_time_s.peak_rss_bytes:NUMBER"
  "config.build_upload:STRING" "config.build_on:STRING"
  "simulation:OBJECT" "simulation.presim_wall_s:NUMBER" "simulation.sim_wall_s:NUMBER"
  "simulation.real_time_factor:NUMBER" "simulation.vps:ARRAY" "simulation.phases_sum_s:OBJECT"
  "activity:OBJECT" "activity.spikes:NUMBER" "activity.recorded_neurons:NUMBER" "activity.recorded_spikes:NUMBER"
  "activity.mean_rate_hz:NUMBER" "activity.network_rate_hz:NUMBER" "activity.synaptic_events:NUMBER"
  "activity.synaptic_events_per_s:NUMBER" "activity.synaptic_events_per_s_per_vp:NUMBER"
  "memory:OBJECT" "memory.device_bytes:OBJECT" "memory.host_vp_bytes:OBJECT" "memory.bytes_per_synapse:NUMBER"
  "memory.host_peak_rss_bytes:NUMBER" "memory.bytes_per_plastic_synapse:NUMBER" "memory.history_bytes:NUMBER"
  "config.ee_synapse:STRING" "config.history_max:NUMBER" "network.plastic_synapses:NUMBER"
  "simulation.deliver_static_s:NUMBER" "simulation.deliver_plastic_s:NUMBER"
  "plasticity:OBJECT" "plasticity.ee_synapse:STRING" "plasticity.delivery:STRING" "plasticity.batches:NUMBER" "plasticity.ee_weight_mean_pA:NUMBER"
  "plasticity.ee_weight_sd_pA:NUMBER" "plasticity.ee_weight_min_pA:NUMBER" "plasticity.ee_weight_max_pA:NUMBER")
# keys that may be null (no device, too few spikes, no git)
set(nullable "config.build_threads" "config.device_memory" "config.device_spec" "config.device_name" "config.device_driver" "config.git_commit" "activity.cv_isi"
  "plasticity.ee_weight_checksum")

function(json_type out path)
  string(REPLACE "." ";" keys "${path}")
  string(JSON t ERROR_VARIABLE err TYPE "${doc}" ${keys})
  if(err)
    set(t "MISSING")
  endif()
  set(${out} "${t}" PARENT_SCOPE)
endfunction()

function(json_get out path)
  string(REPLACE "." ";" keys "${path}")
  string(JSON v GET "${doc}" ${keys})
  set(${out} "${v}" PARENT_SCOPE)
endfunction()

string(JSON top_type ERROR_VARIABLE err TYPE "${doc}")
if(err OR NOT top_type STREQUAL "OBJECT")
  message(FATAL_ERROR "validate_results: ${JSON} is not a JSON object: ${err}")
endif()
foreach(entry IN LISTS required)
  string(REPLACE ":" ";" kv "${entry}")
  list(GET kv 0 path)
  list(GET kv 1 want)
  json_type(t "${path}")
  if(NOT t STREQUAL want)
    message(FATAL_ERROR "validate_results: ${path} is ${t}, want ${want}")
  endif()
endforeach()
foreach(path IN LISTS nullable)
  json_type(t "${path}")
  if(t STREQUAL "MISSING")
    message(FATAL_ERROR "validate_results: ${path} is missing (it may be null)")
  endif()
endforeach()
foreach(cls state ring synapses recording other total)
  json_type(t "memory.device_bytes.${cls}")
  json_type(t2 "memory.host_vp_bytes.${cls}")
  if(NOT t STREQUAL "NUMBER" OR NOT t2 STREQUAL "NUMBER")
    message(FATAL_ERROR "validate_results: memory.*.${cls} missing or not a number")
  endif()
endforeach()
json_get(schema "schema")
if(NOT schema STREQUAL "nestcl-results/1")
  message(FATAL_ERROR "validate_results: schema '${schema}', want nestcl-results/1")
endif()
string(JSON n_vps LENGTH "${doc}" simulation vps)
json_get(threads "config.threads")
json_get(streams "config.streams")
math(EXPR want_vps "${threads} + ${streams}")
if(NOT n_vps EQUAL want_vps)
  message(FATAL_ERROR "validate_results: ${n_vps} VP entries for ${threads} threads + ${streams} streams")
endif()
math(EXPR last "${n_vps} - 1")
foreach(v RANGE ${last})
  foreach(k kind neurons synapses phases_s)
    string(JSON t ERROR_VARIABLE err TYPE "${doc}" simulation vps ${v} ${k})
    if(err)
      message(FATAL_ERROR "validate_results: simulation.vps[${v}].${k} missing")
    endif()
  endforeach()
  foreach(p update deliver exchange poisson other other_wait)
    string(JSON t ERROR_VARIABLE err TYPE "${doc}" simulation vps ${v} phases_s ${p})
    if(err OR NOT t STREQUAL "NUMBER")
      message(FATAL_ERROR "validate_results: simulation.vps[${v}].phases_s.${p} missing")
    endif()
    string(JSON x GET "${doc}" simulation vps ${v} phases_s ${p})
    if(x LESS 0)
      message(FATAL_ERROR "validate_results: simulation.vps[${v}].phases_s.${p} is negative (${x})")
    endif()
  endforeach()
  # The enqueue counters (issue 29): a stream launches kernels every super step and, in the
  # host clock's loop, waits for its device every super step; in the device loop
  # (simulation.device_loop) it waits less than once per super step (drains); a CPU thread
  # enqueues nothing.
  string(JSON kind GET "${doc}" simulation vps ${v} kind)
  string(JSON launches ERROR_VARIABLE err GET "${doc}" simulation vps ${v} enqueued launches)
  if(err)
    message(FATAL_ERROR "validate_results: simulation.vps[${v}].enqueued.launches missing")
  endif()
  string(JSON waits GET "${doc}" simulation vps ${v} enqueued per_super_step waits)
  string(JSON steps GET "${doc}" simulation vps ${v} enqueued super_steps)
  string(JSON loop ERROR_VARIABLE err GET "${doc}" simulation device_loop)
  if(err)
    message(FATAL_ERROR "validate_results: simulation.device_loop missing")
  endif()
  string(JSON replays ERROR_VARIABLE err GET "${doc}" simulation vps ${v} enqueued replays)
  if(err)
    message(FATAL_ERROR "validate_results: simulation.vps[${v}].enqueued.replays missing")
  endif()
  math(EXPR enqueued "${launches} + ${replays}")
  if(kind STREQUAL "stream" AND steps GREATER 0 AND enqueued LESS steps)
    message(FATAL_ERROR "validate_results: stream ${v}: ${launches} launches and ${replays} replays over ${steps} "
      "super steps")
  endif()
  if(kind STREQUAL "stream" AND steps GREATER 10 AND loop STREQUAL "OFF" AND waits LESS 1)
    message(FATAL_ERROR "validate_results: stream ${v} (host clock): ${waits} waits per super step")
  endif()
  if(kind STREQUAL "stream" AND steps GREATER 10 AND loop STREQUAL "ON" AND NOT waits LESS 1)
    message(FATAL_ERROR "validate_results: stream ${v} (device loop): ${waits} waits per super step")
  endif()
  if(kind STREQUAL "thread" AND NOT launches EQUAL 0)
    message(FATAL_ERROR "validate_results: thread ${v} counted ${launches} kernel launches")
  endif()
  # other_wait is part of other, not a phase of its own.
  string(JSON other GET "${doc}" simulation vps ${v} phases_s other)
  string(JSON wait GET "${doc}" simulation vps ${v} phases_s other_wait)
  if(wait GREATER other)
    message(FATAL_ERROR "validate_results: simulation.vps[${v}]: other_wait ${wait} s exceeds other ${other} s")
  endif()
endforeach()
json_get(neurons "network.neurons")
json_get(ne "network.NE")
json_get(ni "network.NI")
json_get(ce "network.CE")
json_get(ci "network.CI")
json_get(syn "network.synapses")
math(EXPR sum "${ne} + ${ni}")
math(EXPR want_syn "${neurons} * (${ce} + ${ci})")
if(NOT sum EQUAL neurons OR NOT syn EQUAL want_syn OR neurons LESS 1)
  message(FATAL_ERROR "validate_results: ${neurons} neurons (NE ${ne} + NI ${ni}), ${syn} synapses (want ${want_syn})")
endif()
# Plastic E->E: every E->E synapse is one (NE x CE), at most 12 bytes each (plus the amortised row pointers and
# per-source state); static: none.
json_get(ees "config.ee_synapse")
json_get(nps "network.plastic_synapses")
json_get(bpps "memory.bytes_per_plastic_synapse")
if(ees STREQUAL "static_synapse")
  set(want_ps 0)
else()
  math(EXPR want_ps "${ne} * ${ce}")
  if(bpps GREATER 12.5 OR bpps LESS 12)
    message(FATAL_ERROR "validate_results: ${bpps} bytes per plastic synapse, want 12 (+ row pointers)")
  endif()
  json_type(t "plasticity.ee_weight_checksum")
  if(NOT t STREQUAL "STRING")
    message(FATAL_ERROR "validate_results: plasticity.ee_weight_checksum missing for plastic E->E")
  endif()
endif()
if(NOT nps EQUAL want_ps)
  message(FATAL_ERROR "validate_results: ${nps} plastic synapses with ${ees}, want ${want_ps}")
endif()
json_get(bps "memory.bytes_per_synapse")
if(bps LESS_EQUAL 0)
  message(FATAL_ERROR "validate_results: bytes_per_synapse ${bps}")
endif()
json_get(rate "activity.mean_rate_hz")
if(DEFINED RATE_MIN AND DEFINED RATE_MAX)
  if(rate LESS RATE_MIN OR rate GREATER RATE_MAX)
    message(FATAL_ERROR "validate_results: mean rate ${rate} Hz outside the band [${RATE_MIN}, ${RATE_MAX}] Hz")
  endif()
endif()
message(STATUS "validate_results: ${JSON} valid; ${neurons} neurons, ${syn} synapses, rate ${rate} Hz, ${bps} bytes/synapse")
