# port.sh: free_port and listening, for the suites and scripts that start a server on loopback.

# listening PORT: something accepts connections on 127.0.0.1:PORT.
listening() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# free_port: a loopback port nothing listens on, below Linux's ephemeral range
# (32768 and up by default): a port an outgoing connection holds answers no
# connect, yet a server could not bind it.
free_port() {
	local p
	while :; do
		p=$((20000 + RANDOM % 12000))
		listening "$p" || { echo "$p"; return; }
	done
}
