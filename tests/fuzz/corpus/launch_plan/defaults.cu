//leap-launch: sum grid=(rows, ceil_div(n, 32), 1) block=(32, 8)
// leap-launch: k grid=1 block=1 args=()
