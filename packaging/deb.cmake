# packaging/deb.cmake: the Debian package (cpack -G DEB, or the "deb" target): the binary
# in /usr/bin, the man page gzipped, the three completions where Debian's shells look, a
# copyright file and a changelog, as lintian wants them. Why CPack and not debian/:
# DESIGN-NOTES.md ("The Debian package").

# The pieces only the package has (component "deb", left out of a plain
# "cmake --install"): lintian wants man pages and changelogs compressed with gzip -9n.
set(_deb_dir ${CMAKE_BINARY_DIR}/deb)
configure_file(${CMAKE_CURRENT_LIST_DIR}/changelog.in ${_deb_dir}/changelog @ONLY)
add_custom_command(OUTPUT ${_deb_dir}/accelctl.1.gz ${_deb_dir}/changelog.gz
  COMMAND gzip -9nc ${PROJECT_SOURCE_DIR}/man/accelctl.1 > ${_deb_dir}/accelctl.1.gz
  COMMAND gzip -9nc ${_deb_dir}/changelog > ${_deb_dir}/changelog.gz
  DEPENDS ${PROJECT_SOURCE_DIR}/man/accelctl.1 ${_deb_dir}/changelog
  COMMENT "Compressing the man page and changelog for the Debian package")
add_custom_target(deb_files ALL DEPENDS ${_deb_dir}/accelctl.1.gz ${_deb_dir}/changelog.gz)
install(FILES ${_deb_dir}/accelctl.1.gz DESTINATION share/man/man1
  COMPONENT deb EXCLUDE_FROM_ALL)
install(FILES ${_deb_dir}/changelog.gz ${CMAKE_CURRENT_LIST_DIR}/copyright
  DESTINATION share/doc/accelctl COMPONENT deb EXCLUDE_FROM_ALL)

# The package takes the binary and completions (component "runtime") and the
# "deb" pieces, not the plain man page.
set(CPACK_INSTALL_CMAKE_PROJECTS
  "${CMAKE_BINARY_DIR};accelctl;runtime;/"
  "${CMAKE_BINARY_DIR};accelctl;deb;/")
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME accelctl)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES TRUE)
set(CPACK_PACKAGE_CONTACT "accelctl developers <dev@accelctl.invalid>")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION utils)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
# Depends from the binary itself (dpkg-shlibdeps): libc6 only, as hiredis is
# linked statically and the rest is dlopen()ed; tests/package checks it.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "redis-server, libcurl4, libjansson4")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
  "process control for the shell scripts of distributed GPU jobs")
# CPack puts the summary first itself: this is the extended description.
set(CPACK_PACKAGE_DESCRIPTION "accelctl gives the Bash scripts of jobs under Slurm, torchrun, MPI,
Flux, PALS, LSF and Kubernetes what Hugging Face Accelerate gives Python
scripts: which process is main, a step run on one process only, barriers
and broadcasts through a helper per node, and Redis or etcd across nodes.
One binary that links only libc.")
# Directories 0755 whatever the umask of the machine building it.
set(CPACK_INSTALL_DEFAULT_DIRECTORY_PERMISSIONS
  OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)
include(CPack)
