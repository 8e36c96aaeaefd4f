// SPDX-License-Identifier: MIT
// A small Kokkos program for test_real_kokkos.py (built against the Kokkos
// that GT_KOKKOS_ROOT names): "axpy" 30 times inside region "solve", "dot"
// 10 times, one deep copy, from main.
#include <Kokkos_Core.hpp>
#include <cstdio>

int main(int argc, char **argv)
{
	Kokkos::initialize(argc, argv);
	{
		const int n = 1 << 18;
		Kokkos::View<double *> x("x", n), y("y", n);
		double dot = 0;

		Kokkos::parallel_for("fill", n, KOKKOS_LAMBDA(int i) { x(i) = 0.5 * i; });
		Kokkos::Profiling::pushRegion("solve");
		for (int r = 0; r < 30; r++)
			Kokkos::parallel_for("axpy", n, KOKKOS_LAMBDA(int i) {
				double v = y(i);
				for (int k = 0; k < 50; k++)
					v = v * 0.999 + 0.5 * x(i);
				y(i) = v;
			});
		Kokkos::Profiling::popRegion();
		for (int r = 0; r < 10; r++)
			Kokkos::parallel_reduce("dot", n, KOKKOS_LAMBDA(int i, double &s) { s += x(i) * y(i); }, dot);
		auto h = Kokkos::create_mirror(y);
		Kokkos::deep_copy(h, y);
		std::printf("dot %.6e y0 %.3f\n", dot, h(0));
	}
	Kokkos::finalize();
	return 0;
}
