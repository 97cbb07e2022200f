# cmake -DNESTCL=<nestcl binary> -DOUT=<folder> -DMATCH=<profile> -DOTHER=<profile> -P repo_trees.cmake
#
# Two trees laid out as an install, each a copy of the nestcl binary in bin/ and one profile in
# share/nestcl/perfmodel/profiles/, where nestcl_pm_repository finds the repository's profiles relative to the
# binary (perfmodel/CMakeLists.txt's repository tests): OUT/match with MATCH (fitted for this machine's device),
# OUT/other with OTHER (of another device).
foreach(tree match other)
  file(REMOVE_RECURSE ${OUT}/${tree})
  file(MAKE_DIRECTORY ${OUT}/${tree}/bin ${OUT}/${tree}/share/nestcl/perfmodel/profiles)
  file(COPY ${NESTCL} DESTINATION ${OUT}/${tree}/bin)
endforeach()
file(COPY ${MATCH} DESTINATION ${OUT}/match/share/nestcl/perfmodel/profiles)
file(COPY ${OTHER} DESTINATION ${OUT}/other/share/nestcl/perfmodel/profiles)
