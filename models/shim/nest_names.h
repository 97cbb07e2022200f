/*
 * nestcl's NEST-API shim: the status-dictionary names (NEST 3.10 keeps them as
 * std::string constants in namespace nest::names). Only names this project's
 * models use are listed.
 */
#ifndef NEST_NAMES_H
#define NEST_NAMES_H

#include <string>

namespace nest
{
namespace names
{
const std::string a( "a" );
const std::string b( "b" );
const std::string c( "c" );
const std::string d( "d" );
const std::string C_m( "C_m" );
const std::string consistent_integration( "consistent_integration" );
const std::string E_L( "E_L" );
const std::string flush_event_send_interval( "flush_event_send_interval" );
const std::string I( "I" );
const std::string I_e( "I_e" );
const std::string I_syn( "I_syn" );
const std::string I_syn_ex( "I_syn_ex" );
const std::string I_syn_in( "I_syn_in" );
const std::string n_synapses( "n_synapses" );
const std::string origin( "origin" );
const std::string rate( "rate" );
const std::string recordables( "recordables" );
const std::string refractory_input( "refractory_input" );
const std::string start( "start" );
const std::string stop( "stop" );
const std::string t_ref( "t_ref" );
const std::string t_spike( "t_spike" );
const std::string tau_minus( "tau_minus" );
const std::string tau_minus_triplet( "tau_minus_triplet" );
const std::string post_trace( "post_trace" );
const std::string clear( "clear" );
const std::string alpha( "alpha" );
const std::string delay( "delay" );
const std::string Kplus( "Kplus" );
const std::string lambda( "lambda" );
const std::string mu( "mu" );
const std::string mu_minus( "mu_minus" );
const std::string mu_plus( "mu_plus" );
const std::string size_of( "size_of" );
const std::string tau_plus( "tau_plus" );
const std::string weight( "weight" );
const std::string Wmax( "Wmax" );
const std::string tau_m( "tau_m" );
const std::string tau_syn( "tau_syn" );
const std::string tau_syn_ex( "tau_syn_ex" );
const std::string tau_syn_in( "tau_syn_in" );
const std::string U_m( "U_m" );
const std::string V_m( "V_m" );
const std::string V_min( "V_min" );
const std::string V_reset( "V_reset" );
const std::string V_th( "V_th" );
// Conductance-based, adaptive and Hodgkin-Huxley models (iaf_cond_alpha,
// aeif_cond_exp, hh_psc_alpha).
const std::string Act_m( "Act_m" );
const std::string Act_n( "Act_n" );
const std::string Delta_T( "Delta_T" );
const std::string dg_ex( "dg_ex" );
const std::string dg_in( "dg_in" );
const std::string E_ex( "E_ex" );
const std::string E_in( "E_in" );
const std::string E_K( "E_K" );
const std::string E_Na( "E_Na" );
const std::string g_ex( "g_ex" );
const std::string g_in( "g_in" );
const std::string g_K( "g_K" );
const std::string g_L( "g_L" );
const std::string g_Na( "g_Na" );
const std::string gsl_error_tol( "gsl_error_tol" );
const std::string Inact_h( "Inact_h" );
const std::string t_ref_remaining( "t_ref_remaining" );
const std::string tau_w( "tau_w" );
const std::string V_peak( "V_peak" );
const std::string w( "w" );
// Conductance-based multi-receptor models (aeif_cond_alpha_multisynapse).
const std::string dg( "dg" );
const std::string E_rev( "E_rev" );
const std::string g( "g" );
const std::string has_connections( "has_connections" );
const std::string n_receptors( "n_receptors" );
// pp_psc_delta
const std::string c_1( "c_1" );
const std::string c_2( "c_2" );
const std::string c_3( "c_3" );
const std::string dead_time( "dead_time" );
const std::string dead_time_random( "dead_time_random" );
const std::string dead_time_shape( "dead_time_shape" );
const std::string E_sfa( "E_sfa" );
const std::string q_sfa( "q_sfa" );
const std::string tau_sfa( "tau_sfa" );
const std::string with_reset( "with_reset" );
// iaf_tum_2000's short-term plasticity
const std::string tau_psc( "tau_psc" );
const std::string tau_rec( "tau_rec" );
const std::string tau_fac( "tau_fac" );
const std::string U( "U" );
const std::string x( "x" );
const std::string y( "y" );
const std::string u( "u" );
}  // namespace names
}  // namespace nest

#endif
