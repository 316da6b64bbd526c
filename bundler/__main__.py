from bundler.cli import run

if __name__ == "__main__":  # run as a program, not when imported
    run()
