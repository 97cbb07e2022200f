# Robustness inputs that must translate (cmake -P): each inputs/<case>.h exits
# 0, its generated C compiles warning-free with -Werror, its kernel builds on
# the OpenCL device, and the kernel shows the expected rewrites; host_fields.h's
# report names its host-side members' types as libclang 14 prints them.
#   -DTRANSLATOR=... -DCLBUILD=... -DCC=... -DSOURCE_DIR=<tests/translator> -DSHIM=...
#   -DKERNELS_DIR=... -DHOST_INCLUDE=... -DOUT=<scratch dir>
foreach(v TRANSLATOR CLBUILD CC SOURCE_DIR SHIM KERNELS_DIR HOST_INCLUDE OUT)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "check_style.cmake: -D${v}=... is required")
  endif()
endforeach()
file(REMOVE_RECURSE ${OUT})

# case -> regular expressions its kernel must match (no square brackets: they
# would stop CMake from splitting the list)
set(expect_ok_model "nestcl_ring_take\\(" "NESTCL_P_theta_")
set(expect_nestml_style
  "get_t: an unused lambda, dropped"          # NESTML's get_t
  "double nestcl_l_n = 0.0"                    # a local named like the argument n, renamed
  "nestcl_l_n \\+= B__spike_inputs_grid_sum_." # ... and its uses; vector via a reference getter
  "k < \\(size_t\\)K"                          # .size() of a per-receptor vector
  "i < 2UL"                                    # static const member folded to its value
  "S__ode_state.\\(size_t\\)\\(\\(0 /\\* V_m \\*/\\)\\) \\* n \\+ nestcl_i." # ode_state[ State_::V_m ]
  "nestcl_max_d\\("                            # std::max on doubles
  "S__r.nestcl_i. == 0 && ")               # 'and'

# gap_forward: update() forwards to update_( origin, from, to, false ); the waveform-relaxation branch
# and the gap-junction plumbing fold away, and the glue refuses what the device assumes away
set(expect_gap_forward
  "an if whose condition is false on the device .update.. passes this parameter as a constant."
  "an if whose condition is true on the device"
  "a switch on 3 on the device"
  "0.0 /.* B_.coefficients_: gap-junction input, zero on the device"
  "left out: a gap-junction event"
  "left out: resets a host-only gap-junction buffer"
  "left out: update.. discards the value"
  "nestcl_ring_take\\("                       # the live branch's input
  "nestcl_emit_spike\\(")
# nothing of the dead branch, the dead locals or the event is rendered
set(reject_gap_forward "new_coefficients" "scratch" "last_v_" "exceeded" "BadProperty" "set_coeffarray" "send_secondary")
set(expect_glue_gap_forward "secondary_connections_exist\\(\\)" "get_wfr_interpolation_order\\(\\) != 3"
                            "cannot be on a stream VP")
# flush_parrot: no flush event is due on the device (the interval is infinite unless the glue refuses)
set(expect_flush_parrot
  "an if whose condition is false on the device .flush events are off"
  "set_last_event_time: read only by flush_event_is_due"
  "nestcl_emit_spikes\\(")                    # the repeated spikes keep their multiplicity
set(reject_flush_parrot "set_flush_event_flag")
set(expect_glue_flush_parrot "flush_event_send_interval_steps_" "!= std::numeric_limits< long >::max\\(\\)"
                             "sends flush events")

# precise_ps: the *_ps idioms (SliceRingBuffer, helpers, regula_falsi, IAFPropagator, set_spiketime's offset)
set(expect_precise_ps
  "__global const uint \\*evq_first"                        # the events of the call (model.h, event_queue)
  "nestcl_evq_next\\(evq_lag, evq_offset, evq_weight, &nestcl_evq_cur, nestcl_evq_end, origin_steps, T, true"
  "nestcl_evq_rstamp = \\(T\\), nestcl_evq_roff = \\("         # add_refractory()
  "NESTCL_INLINE void nestcl_h_precise_ps_propagate_\\(NESTCL_SELF_PARAMS, const nestcl_i64 nestcl_lag, const double dt\\)"
  "nestcl_h_precise_ps_emit_spike_\\(NESTCL_SELF_ARGS, lag, "  # the Time argument dropped, the lag passed on
  "nestcl_h_precise_ps_regula_falsi\\(NESTCL_SELF_ARGS, nestcl_lag, dt\\)"
  "nestcl_h_precise_ps_threshold_distance\\(NESTCL_SELF_ARGS, nestcl_lag, root\\)"
  "nestcl_iaf_propagator_exp\\(NESTCL_P_tau_syn_, NESTCL_P_tau_m_, NESTCL_P_c_m_, dt, NESTCL_LIBM_VARIANT\\)"
  "nestcl_iaf_propagator_alpha\\(NESTCL_P_tau_syn_, NESTCL_P_tau_m_, NESTCL_P_c_m_, t, &p31, &p32, NESTCL_LIBM_VARIANT\\)"
  "nestcl_glibc_exp\\(-t / NESTCL_P_tau_m_, NESTCL_LIBM_VARIANT\\)"  # std::exp in a helper: glibc's
  "NESTCL_SET_SPIKETIME_OFFSET\\(nestcl_i, S__last_step_"
  "nestcl_emit_spikes_offset\\(")
set(reject_precise_ps "std::tie" "S_\\." "V_\\." "add_spike" "origin\\.")
set(expect_glue_precise_ps "events_precise_ps\\(" "B_\\.events_\\.prepare_delivery\\(\\)"
                           "get_next_spike\\( origin_steps \\+ lag, false, offset, weight, end_of_refract \\)"
                           "nestcl_block_stage_event\\( block, "
                           "nest::Time::step\\( origin_steps \\+ lag \\+ 1 \\), offset \\)")

foreach(case ok_model nestml_style gap_forward flush_parrot precise_ps)
  execute_process(COMMAND ${TRANSLATOR} inputs/${case}.h -o ${OUT} -I ${SHIM}
    WORKING_DIRECTORY ${SOURCE_DIR} RESULT_VARIABLE rc ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${case}: exit ${rc}\n${err}")
  endif()
  foreach(c ${OUT}/${case}_cpu.c ${OUT}/${case}_desc.c)
    execute_process(COMMAND ${CC} -std=c11 -D_POSIX_C_SOURCE=200809L -Wall -Wextra -Werror -ffp-contract=off
                            -fsyntax-only -I ${KERNELS_DIR} -I ${HOST_INCLUDE} ${c}
      RESULT_VARIABLE crc ERROR_VARIABLE cerr)
    if(NOT crc EQUAL 0)
      message(FATAL_ERROR "${c} does not compile:\n${cerr}")
    endif()
  endforeach()
  execute_process(COMMAND ${CLBUILD} ${OUT}/${case}.cl RESULT_VARIABLE brc OUTPUT_VARIABLE bout ERROR_VARIABLE berr)
  if(NOT brc EQUAL 0 AND NOT brc EQUAL 77)
    message(FATAL_ERROR "${case}.cl does not build:\n${bout}${berr}")
  endif()
  file(READ ${OUT}/${case}.cl cl)
  foreach(re IN LISTS expect_${case})
    if(NOT cl MATCHES "${re}")
      message(FATAL_ERROR "${case}.cl lacks /${re}/")
    endif()
  endforeach()
  foreach(re IN LISTS reject_${case})
    if(cl MATCHES "${re}")
      message(FATAL_ERROR "${case}.cl has /${re}/, which the device path leaves out")
    endif()
  endforeach()
  if(expect_glue_${case})
    file(READ ${OUT}/${case}_glue.hpp glue)
    foreach(re IN LISTS expect_glue_${case})
      if(NOT glue MATCHES "${re}")
        message(FATAL_ERROR "${case}_glue.hpp lacks /${re}/")
      endif()
    endforeach()
  endif()
endforeach()
# Host-side members are named in the report's notes the same way whatever the
# libclang version (16 on wraps written types in elaborated types).
execute_process(COMMAND ${TRANSLATOR} inputs/host_fields.h -o ${OUT} -I ${SHIM}
                        --report json --report-file ${OUT}/host_fields.json
  WORKING_DIRECTORY ${SOURCE_DIR} RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "host_fields: exit ${rc}\n${err}")
endif()
file(READ ${OUT}/host_fields.json report)
string(JSON notes GET "${report}" models 0 notes)
foreach(expect "'Variables_::rng_' of type 'nest::RngPtr'" "'Variables_::qualified_rng_' of type 'nest::RngPtr'"
               "'Variables_::t_' of type 'nest::Time'" "'Variables_::names_' of type 'std::vector<std::string>'")
  string(FIND "${notes}" "${expect}" at)
  if(at LESS 0)
    message(FATAL_ERROR "host_fields: the notes lack ${expect}:\n${notes}")
  endif()
endforeach()
message(STATUS "robustness inputs translate, compile and build")
