#ifndef KWIN_RELAY_MUX_H
#define KWIN_RELAY_MUX_H
/* Runs the multiplexing relay on stdin/stdout until stdin ends; returns only on start-up failure. */
int run_mux(void);
#endif
