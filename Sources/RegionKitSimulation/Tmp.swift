public enum _SimPlaceholder {}
