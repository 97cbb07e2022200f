/*
 * nestcl's NEST-API shim: the exceptions models throw from set_status(),
 * handles_test_event() and, for the GSL-integrated models, update(). Messages
 * follow NEST's wording closely enough for tests to check them.
 */
#ifndef EXCEPTIONS_H
#define EXCEPTIONS_H

#include <stdexcept>
#include <string>

namespace nest
{
class KernelException : public std::runtime_error
{
public:
  explicit KernelException( const std::string& what )
    : std::runtime_error( what )
  {
  }
};

class BadProperty : public KernelException
{
public:
  explicit BadProperty( const std::string& what )
    : KernelException( what )
  {
  }
};

class BadParameter : public KernelException
{
public:
  explicit BadParameter( const std::string& what )
    : KernelException( what )
  {
  }
};

class UnknownReceptorType : public KernelException
{
public:
  UnknownReceptorType( long receptor_type, const std::string& name )
    : KernelException( "Receptor type " + std::to_string( receptor_type ) + " is not available in " + name + "." )
  {
  }
};

class IncompatibleReceptorType : public KernelException
{
public:
  IncompatibleReceptorType( long receptor_type, const std::string& name, const std::string& event )
    : KernelException(
      "Receptor type " + std::to_string( receptor_type ) + " in " + name + " does not accept " + event + "." )
  {
  }
};

class UnexpectedEvent : public KernelException
{
public:
  UnexpectedEvent()
    : KernelException( "Target does not handle this event type." )
  {
  }
};

/* An ODE model's GSL integrator returned an error status from gsl_odeiv_evolve_apply(). */
class GSLSolverFailure : public KernelException
{
public:
  GSLSolverFailure( const std::string& model, const int status )
    : KernelException( "The GSL solver of " + model + " failed with status " + std::to_string( status ) + "." )
  {
  }
};

/* A model's state left the range in which its integration can be trusted
 * (aeif models: V_m or w out of bounds after an integration step). */
class NumericalInstability : public KernelException
{
public:
  explicit NumericalInstability( const std::string& model )
    : KernelException( "Numerical instability while updating " + model + "." )
  {
  }
};

class IllegalConnection : public KernelException
{
public:
  explicit IllegalConnection( const std::string& msg )
    : KernelException( "Creation of connection is not possible because:\n" + msg )
  {
  }
};
}  // namespace nest

#endif
