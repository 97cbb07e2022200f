/*
 * What nestcl_rows.h needs of NEST's private members: the target index that
 * an "hpc" connection (TargetIdentifierIndex) keeps, read without a visit to
 * its node (an explicit instantiation may name private members, C++17
 * [temp.spec]; it lives in this one file).
 */
#include "nestcl/nestcl_manager.h"
#include "nestcl/nestcl_manager_impl.h"
#include "nestcl/nestcl_rows.h"

#ifdef HAVE_NESTCL
namespace nest
{
struct conn_target_tag
{
};
struct index_target_tag
{
};
auto member( conn_target_tag );
auto member( index_target_tag );
template struct steal< conn_target_tag, &Connection< TargetIdentifierIndex >::target_ >;
template struct steal< index_target_tag, &TargetIdentifierIndex::target_ >;

TargetIdentifierIndex Connection< TargetIdentifierIndex >::*const index_target = member( conn_target_tag {} );
targetindex TargetIdentifierIndex::*const index_value = member( index_target_tag {} );
}
#endif
