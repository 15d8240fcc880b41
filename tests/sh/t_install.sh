# t_install.sh: cmake --install puts the binary, the man page and the three completions
# in their standard places (GNUInstallDirs), and the installed binary runs.
. "$(dirname "$0")/lib.sh"

testInstall() {
	command -v cmake >/dev/null || startSkipping
	local d; d=$(scratch)/root
	DESTDIR="$d" cmake --install "$ACCELCTL_BIN_DIR" --prefix /usr >/dev/null
	assertEquals "cmake --install" 0 $?
	assertTrue "binary" "[ -x '$d/usr/bin/accelctl' ]"
	assertTrue "man page" "[ -f '$d/usr/share/man/man1/accelctl.1' ]"
	assertTrue "bash completion" "[ -f '$d/usr/share/bash-completion/completions/accelctl' ]"
	assertTrue "zsh completion" "[ -f '$d/usr/share/zsh/vendor-completions/_accelctl' ]"
	assertTrue "fish completion" "[ -f '$d/usr/share/fish/vendor_completions.d/accelctl.fish' ]"
	assertEquals "the installed binary runs" "$("$ACCELCTL" --list-commands)" "$("$d/usr/bin/accelctl" --list-commands)"
}

load_shunit2
